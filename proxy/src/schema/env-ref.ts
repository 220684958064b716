// `env.VAR`: a configuration value that names an environment variable instead of holding a secret.

/** The value itself, or the variable's value; `missing` names a variable that is unset or empty. */
export function readEnvRef(value: string, env: NodeJS.ProcessEnv): { value: string } | { missing: string } {
  if (!value.startsWith('env.')) return { value };
  const name = value.slice(4);
  const resolved = env[name];
  return resolved === undefined || resolved === '' ? { missing: name } : { value: resolved };
}

/** Where secret material lives: `env.VAR` there reads the environment. */
const ENV_REF_ROOTS = ['providers', 'governance.virtual_keys', 'governance.auth_config', 'auth_config', 'redis', 'logs_store.config', 'vector_store.config', 'mcp.client_configs', 'webhooks', 'encryption_key'];

/** Whether a string at this document path is read as an `env.VAR` reference. */
export const resolvesEnvRef = (path: string): boolean => ENV_REF_ROOTS.some((r) => path.startsWith(r));
