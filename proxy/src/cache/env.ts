// `vector_store` from the environment (SKYBRIDGE_VECTOR_STORE, a JSON object of the section), as the
// Helm chart sets it: in Kubernetes mode the configuration is rendered from custom resources (a
// CachePolicy becomes the semantic_cache plugin) and carries no `vector_store`; the store is a
// property of the deployment. `env.VAR` values inside it (a password from a Secret) are read as in
// config.json.
import { VectorStoreSchema, type VectorStoreConfig } from '../schema/cache.ts';
import { validator } from '../schema/validate.ts';

const check = validator(VectorStoreSchema);

/** Undefined when unset; an unreadable value throws, naming the variable and the field. */
export function vectorStoreFromEnv(env: NodeJS.ProcessEnv = process.env): VectorStoreConfig | undefined {
  const text = env.SKYBRIDGE_VECTOR_STORE;
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('SKYBRIDGE_VECTOR_STORE must be a JSON object (the vector_store section of config.json)');
  }
  const checked = check(value);
  if (Array.isArray(checked)) throw new Error(`SKYBRIDGE_VECTOR_STORE: ${checked.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
  return checked;
}

/** The document with the environment's vector_store when it has none of its own. */
export function withEnvVectorStore<T extends { vector_store?: unknown }>(config: T, env: NodeJS.ProcessEnv = process.env): T {
  if (config.vector_store !== undefined) return config;
  const vs = vectorStoreFromEnv(env);
  return vs ? { ...config, vector_store: vs } : config;
}
