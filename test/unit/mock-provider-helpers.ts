// Raw HTTP helpers for the mock-provider tests (the SDKs hide the wire; these show it).

export interface RawEvent {
  event: string | undefined;
  data: string;
}

export async function postRaw(url: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Splits an SSE body into events (either \n\n or \r\n\r\n separated). */
export function parseSse(text: string): RawEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((b) => b.trim() !== '')
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      return { event, data: data.join('\n') };
    });
}

export const OPENAI_AUTH = { authorization: 'Bearer sk-test' };
export const ANTHROPIC_AUTH = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
export const GEMINI_AUTH = { 'x-goog-api-key': 'g-test' };
