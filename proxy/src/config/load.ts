// Reading config.json (or, without one, the environment) into a document, checked by config/check.ts.
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { GatewayConfig } from '../schema/gateway.ts';
import { PROVIDER_KINDS } from '../providers/catalog.ts';
import { vertexFromEnv } from '../providers/vertex/config.ts';
import { checkConfig, ConfigError, type LoadedConfig } from './check.ts';
import { vaultSecrets } from './vault.ts';
import { readInThread } from './read-off-loop.ts';
import type { ReadResult } from './read-worker.ts';
import { seedDigest } from './seed-digest.ts';
import { runInSteps, yieldToLoop } from './steps.ts';
import { documentFromSlices } from './document-slices.ts';
import type { FieldError } from '../schema/validate.ts';
import { log } from '../log.ts';

export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: '(file)', message: (err as Error).message }]);
  }
  return parseConfig(text, file, env);
}

/**
 * loadConfigFile after reading, from the vault, every secret the file references (the check itself
 * is synchronous and reads what was read). A vault section that cannot be used is an error here.
 */
export async function loadConfigWithSecrets(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  await primeVault(file, env);
  return loadConfigFile(file, env);
}

/** Reads the vault secrets config.json references; unreadable JSON is left for the check to report. */
export async function primeVault(file: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return;
  }
  const errors = await vaultSecrets.prime(raw, env);
  if (errors.length) throw new ConfigError(file, errors);
}

/**
 * config.json read off the event loop and parsed, its vault secrets read: the document the check
 * takes (a reload; the start-up path is loadConfigWithSecrets). Unreadable or unparsable: ConfigError.
 */
export async function readConfigDocument(file: string, env: NodeJS.ProcessEnv = process.env): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: '(file)', message: (err as Error).message }]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, [{ path: '(root)', message: `not valid JSON: ${(err as Error).message}` }]);
  }
  const errors = await vaultSecrets.prime(raw, env);
  if (errors.length) throw new ConfigError(file, errors);
  return raw;
}

/** A reload's document: parsed, its vault secrets read, its digest, and what the schema found (empty: it passed). */
export interface ReloadDocument {
  raw: unknown;
  digest: string;
  /** Undefined when the reader thread could not run: the check then makes every pass itself. */
  problems?: FieldError[];
}

/** Below this a reload's whole-document passes take a few ms on the loop: a thread would only add its start-up. */
export const THREAD_FROM_BYTES = 256 * 1024;

/**
 * readConfigDocument for a reload of a possibly large file: reading, parsing, the schema and the
 * digest run in a thread of their own (read-off-loop.ts), so the event loop only parses the text
 * here, a slice per step; the errors are the same. Should the thread fail to start, the same work is
 * done here instead; so is a file under `threadFromBytes`.
 */
export async function readConfigForReload(file: string, env: NodeJS.ProcessEnv = process.env, threadFromBytes = THREAD_FROM_BYTES): Promise<ReloadDocument> {
  const size = await stat(file).then((s) => s.size, () => Infinity);
  if (size < threadFromBytes) {
    const raw = await readConfigDocument(file, env);
    return { raw, digest: seedDigest(raw as GatewayConfig) };
  }
  let read: ReadResult;
  try {
    read = await readInThread(file);
  } catch (err) {
    log.warn('config reader thread failed; reading config.json on the event loop', { file, error: String(err) });
    const raw = await readConfigDocument(file, env);
    return { raw, digest: seedDigest(raw as GatewayConfig) };
  }
  if (read.kind === 'unreadable') throw new ConfigError(file, [{ path: '(file)', message: read.message }]);
  if (read.kind === 'unparsable') throw new ConfigError(file, [{ path: '(root)', message: `not valid JSON: ${read.message}` }]);
  await yieldToLoop();
  // Parsing the text again costs less here than receiving the thread's parsed object (structured
  // clone); in slices, so that no single parse is the whole file.
  const raw = await runInSteps(documentFromSlices(read.slices));
  await yieldToLoop();
  const errors = await vaultSecrets.primeListed((raw as { vault?: unknown } | null)?.vault, () => read.refs, env);
  if (errors.length) throw new ConfigError(file, errors);
  return { raw, digest: read.digest, problems: read.problems };
}

export function parseConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(source, [{ path: '(root)', message: `not valid JSON: ${(err as Error).message}` }]);
  }
  return checkConfig(raw, source, env);
}

/** Providers from the usual environment variables, for running without a config.json. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const providers: NonNullable<GatewayConfig['providers']> = {};
  for (const [name, kind] of Object.entries(PROVIDER_KINDS)) {
    // A Vertex key is a project, a region and credentials, not one variable.
    if (name === 'vertex') {
      const vertex = vertexFromEnv(env);
      if (vertex) providers.vertex = vertex;
      continue;
    }
    const key = env[kind.envKey] ?? (name === 'gemini' ? env.GOOGLE_API_KEY : undefined);
    const baseUrl = env[`${name.toUpperCase()}_BASE_URL`] ?? (name === 'azure' ? env.AZURE_OPENAI_ENDPOINT : undefined);
    if (!key && !(kind.keyless && baseUrl)) continue;
    // Azure has no default endpoint: without the resource's, there is nothing to call.
    if (name === 'azure' && !baseUrl) continue;
    providers[name] = {
      keys: key ? [{ name: `${name}-env`, value: key, models: [], weight: 1 }] : [],
      ...(baseUrl ? { network_config: { base_url: baseUrl } } : {}),
    };
  }
  return { providers };
}
