// A bound on what one MCP server message may weigh, applied while it is read: the SDK buffers a
// whole message (a JSON body, one SSE event) before parsing it, so a tool answering 150 MB took the
// gateway past 1 GB. Bytes are counted since the last message boundary; a message that passes the
// cap is not read further. On a POST (a request of ours, whose JSON-RPC id we know) the rest is
// replaced by a JSON-RPC error for that id, so exactly that call fails with a clear reason; on a
// stream that is not an answer to one request, the stream fails.

export const DEFAULT_MAX_TOOL_ANSWER_MB = 16;

const LF = 0x0a;
const CR = 0x0d;

export function tooLargeMessage(capBytes: number): string {
  return `the MCP server's answer is larger than ${formatBytes(capBytes)} (mcp.tool_manager_config.max_tool_answer_mb): it was not read`;
}

function formatBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}

/** The JSON-RPC id of a request body the SDK sends (undefined for notifications and batches). */
export function requestId(body: unknown): string | number | undefined {
  if (typeof body !== 'string' || body.length > 1_000_000) return undefined;
  try {
    const m = JSON.parse(body) as { id?: unknown };
    return typeof m.id === 'string' || typeof m.id === 'number' ? m.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `body` with each message bounded to `cap` bytes. A message boundary is a blank line (SSE); a JSON
 * body has none, so it is one message. `id`: the request this body answers, whose error replaces an
 * oversized message.
 */
export function cappedBody(body: ReadableStream<Uint8Array>, cap: number, sse: boolean, id: string | number | undefined): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let size = 0;
  // Line feeds in a row (carriage returns between them ignored), across chunks.
  let feeds = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      let counted = value.length;
      if (sse) {
        for (let i = 0; i < value.length; i++) {
          const b = value[i]!;
          if (b === LF) {
            if (++feeds >= 2) counted = value.length - i - 1;
          } else if (b !== CR) feeds = 0;
        }
        if (counted < value.length) size = 0;
      }
      size += counted;
      if (size <= cap) {
        controller.enqueue(value);
        return;
      }
      await reader.cancel().catch(() => undefined);
      if (!sse || id === undefined) {
        controller.error(new Error(tooLargeMessage(cap)));
        return;
      }
      // The part of the message already passed on is ended (the SDK drops it as unparsable), and
      // the call is answered with the reason.
      const error = JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: tooLargeMessage(cap) } });
      controller.enqueue(new TextEncoder().encode(`\n\nevent: message\ndata: ${error}\n\n`));
      controller.close();
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** The response with its body bounded (see cappedBody). */
export function capResponse(res: Response, cap: number, requestBody: unknown): Response {
  if (!res.body) return res;
  const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
  return new Response(cappedBody(res.body, cap, sse, requestBody === undefined ? undefined : requestId(requestBody)), { status: res.status, statusText: res.statusText, headers: res.headers });
}
