// `env.VAR`: a configuration value that names an environment variable instead of holding a secret.

/** The value itself, or the variable's value; `missing` names a variable that is unset or empty. */
export function readEnvRef(value: string, env: NodeJS.ProcessEnv): { value: string } | { missing: string } {
  if (!value.startsWith('env.')) return { value };
  const name = value.slice(4);
  const resolved = env[name];
  return resolved === undefined || resolved === '' ? { missing: name } : { value: resolved };
}
