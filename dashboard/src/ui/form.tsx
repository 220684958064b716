// What every create/edit form repeats: the frame (the gateway's error on top, submit and cancel
// below) and a text field marked invalid when the gateway's error names it.
import type { ComponentChildren } from 'preact';
import { Button, ErrorBox, Field, TextInput } from './components.tsx';

/** A number when the text is one; otherwise the text, so the gateway names the field and why. */
export const toNumber = (s: string): number | string => (s.trim() !== '' && Number.isFinite(Number(s)) ? Number(s) : s);

/** An optional number as the text of an input. */
export const numberText = (n: number | undefined): string => (n === undefined ? '' : String(n));

export function FormButtons(props: { busy: boolean; label: string; onCancel: () => void; class?: string }) {
  return (
    <div class={props.class ?? 'row'}>
      <Button kind="primary" type="submit" disabled={props.busy}>
        {props.label}
      </Button>
      <Button onClick={props.onCancel}>Cancel</Button>
    </div>
  );
}

/**
 * A form that runs `save` (a useAction) on submit and calls `onSaved` with its result when it worked.
 * noValidate: the gateway checks the input, and its message names the field.
 */
export function EditForm<R>(props: {
  save: { run: () => Promise<R | undefined>; busy: boolean; error: unknown };
  onSaved: (result: R) => void;
  submitLabel: string;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const submit = async (e: Event) => {
    e.preventDefault();
    const r = await props.save.run();
    if (r) props.onSaved(r);
  };
  return (
    <form class="stack" onSubmit={submit} noValidate>
      <ErrorBox error={props.save.error} />
      {props.children}
      <FormButtons busy={props.save.busy} label={props.submitLabel} onCancel={props.onCancel} />
    </form>
  );
}

export function TextField(props: {
  label: string;
  value: string;
  onInput: (v: string) => void;
  /** The gateway's message when its error names this field. */
  error: string | undefined;
  name?: string;
  hint?: string;
  type?: 'text' | 'password' | 'number' | 'url';
  placeholder?: string;
  disabled?: boolean;
}) {
  return (
    <Field label={props.label} hint={props.hint} error={props.error}>
      <TextInput type={props.type} value={props.value} onInput={props.onInput} name={props.name} placeholder={props.placeholder} disabled={props.disabled} invalid={!!props.error} />
    </Field>
  );
}
