// Extra HTTP headers edited as `Name: value` lines (webhook endpoints, MCP clients, the routing tester).
import { Field, TextArea } from '../../ui/components.tsx';

/** A header map as the lines the field shows. */
export function headerLines(headers: Record<string, string> | undefined): string {
  return Object.entries(headers ?? {})
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
}

/** `Name: value` lines → a header map; `badLine` is the (1-based) number of the first line without a colon. */
export function parseHeaderLines(text: string): { headers: Record<string, string>; badLine?: number } {
  const headers: Record<string, string> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { headers, badLine: i + 1 };
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return { headers };
}

/** The form's check: the header map, or an error naming the line to fix. */
export function parseHeaders(text: string): { headers: Record<string, string>; error?: string } {
  const { headers, badLine } = parseHeaderLines(text);
  return badLine === undefined ? { headers } : { headers, error: `line ${badLine}: write "Header-Name: value"` };
}

export function HeadersField(props: { value: string; onInput: (v: string) => void; error: string | undefined; hint: string }) {
  return (
    <Field label="Headers" error={props.error} hint={props.hint}>
      <TextArea value={props.value} onInput={props.onInput} name="headers" rows={3} mono invalid={!!props.error} />
    </Field>
  );
}
