// State of a form that checks its input before sending: the fields, the errors found here, and the
// gateway's error shown at the field its `param` names.
import { useState } from 'preact/hooks';
import { ApiError } from '../../lib/api.ts';

export type Errors = Partial<Record<string, string>>;

export function useCheckedForm<S extends object>(initial: () => S, apiError: unknown, fieldOf: (param: string | undefined) => string | undefined) {
  const [state, setState] = useState<S>(initial);
  const [errors, setErrors] = useState<Errors>({});
  const set = <K extends keyof S>(k: K, v: S[K]) => setState((prev) => ({ ...prev, [k]: v }));
  const apiField = apiError instanceof ApiError ? fieldOf(apiError.param) : undefined;
  const err = (k: string): string | undefined => errors[k] ?? (apiField === k && apiError instanceof ApiError ? apiError.message : undefined);
  return { s: state, set, err, setErrors };
}
