// The reader thread of a config.json reload: the passes over the whole document that cannot be
// split into steps (reading, JSON.parse, the `__proto__` walk, the schema's validation, the digest,
// the vault references) run here, off the event loop. The main thread gets the document back as
// JSON texts in slices (parsing them there, one per step, costs less than receiving the parsed
// object by structured clone) and the results, and gives the same errors as the check it replaces.
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { GatewayConfigSchema, type GatewayConfig } from '../schema/gateway.ts';
import { unsafeJson } from '../schema/names.ts';
import { validator, type FieldError } from '../schema/validate.ts';
import { seedDigest } from './seed-digest.ts';
import { sliceDocument, type DocumentSlices } from './document-slices.ts';
import { vaultReferences, type VaultReference } from './vault-refs.ts';

export type ReadResult =
  | { kind: 'unreadable'; message: string }
  | { kind: 'unparsable'; message: string }
  /** `problems`: what the check's first two passes (`__proto__`, the schema) report; empty when it passed them. */
  | { kind: 'read'; slices: DocumentSlices; digest: string; refs: VaultReference[]; problems: FieldError[] };

const validateConfig = validator(GatewayConfigSchema);

export async function readAndVet(file: string): Promise<ReadResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { kind: 'unreadable', message: (err as Error).message };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { kind: 'unparsable', message: (err as Error).message };
  }
  const unsafe = unsafeJson(raw);
  const checked = unsafe ? [unsafe] : validateConfig(raw);
  return { kind: 'read', slices: sliceDocument(raw, text), digest: seedDigest(raw as GatewayConfig), refs: vaultReferences(raw), problems: Array.isArray(checked) ? checked : [] };
}

if (parentPort) {
  const port = parentPort;
  void readAndVet((workerData as { file: string }).file).then((r) => port.postMessage(r));
}
