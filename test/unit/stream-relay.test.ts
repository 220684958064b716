// The text relay and the byte relay (pipeline/relay.ts) against the item path (pipeline/stream.ts)
// they stand in for: for any OpenAI-format stream, however the upstream frames and splits it, the
// client gets the same bytes and the request the same usage; a plain event's payload reaches the
// client as the upstream wrote it, with only extra_fields added.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { createServices } from '../../proxy/src/services.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { RequestContext } from '../../proxy/src/pipeline/context.ts';
import { streamItems, type StreamOptions } from '../../proxy/src/pipeline/stream.ts';
import { Readable } from 'node:stream';
import { pumpRelayed, pumpText, relayable, relayText, TextRelayer } from '../../proxy/src/pipeline/relay.ts';
import { passthroughChunkPlan } from '../../proxy/src/operations/chunk-stream-plan.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const snapshot = compileSnapshot(checkConfig({ providers: { openai: { keys: [{ name: 'k', value: 'sk-upstream', weight: 1 }] } } }, 'test').config);
const services = createServices({ metrics: new Metrics({ processMetrics: false }) });
const extra = { provider: 'openai', request_type: 'chat_completion_stream', model_requested: 'openai/gpt-4o' };
const options = (o: Partial<StreamOptions> = {}): StreamOptions => ({ extra, provider: 'openai', rawResponse: false, rawRequest: undefined, ...o });
const context = () => new RequestContext({ services, snapshot, operation: 'chat' });

async function* bytesOf(pieces: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const p of pieces) yield p;
}

/** The body cut into pieces at the given byte offsets (a UTF-8 character may be cut in two). */
function split(body: string | Buffer, cuts: readonly number[]): Uint8Array[] {
  const bytes = Buffer.from(body);
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    if (c > from) out.push(bytes.subarray(from, c));
    from = Math.max(from, c);
  }
  return out;
}

interface Run {
  text: string;
  /** The client's bytes (the pushed forms). */
  bytes?: Buffer;
  usage: unknown;
  error?: GatewayError;
  batches: number;
}

async function viaItems(body: string | Buffer, cuts: readonly number[], includeUsage: boolean, o: Partial<StreamOptions> = {}): Promise<Run> {
  const plan = passthroughChunkPlan(includeUsage);
  const ctx = context();
  let text = '';
  let batches = 0;
  try {
    for await (const batch of streamItems(ctx, bytesOf(split(body, cuts)), plan, options(o))) {
      batches++;
      for (const item of batch) text += plan.encode(item);
    }
  } catch (err) {
    return { text, usage: ctx.usage, error: err as GatewayError, batches };
  }
  return { text, usage: ctx.usage, batches };
}

async function viaRelay(body: string | Buffer, cuts: readonly number[], includeUsage: boolean, o: Partial<StreamOptions> = {}): Promise<Run> {
  const plan = passthroughChunkPlan(includeUsage);
  const ctx = context();
  const opts = options(o);
  assert.ok(relayable(ctx, plan, opts));
  let text = '';
  let batches = 0;
  try {
    for await (const batch of relayText(ctx, bytesOf(split(body, cuts)), plan, opts)) {
      batches++;
      text += batch.join('');
    }
  } catch (err) {
    return { text, usage: ctx.usage, error: err as GatewayError, batches };
  }
  return { text, usage: ctx.usage, batches };
}

/**
 * The pushed form (what an HTTP answer takes): the upstream as a Readable, what is written to a sink
 * read as the client's bytes. `text`: pushed through the text relay instead of the byte relay.
 */
async function viaPump(body: string | Buffer, cuts: readonly number[], includeUsage: boolean, o: Partial<StreamOptions> = {}, text = false): Promise<Run> {
  const plan = passthroughChunkPlan(includeUsage);
  const ctx = context();
  const opts = options(o);
  assert.ok(relayable(ctx, plan, opts));
  const written: Buffer[] = [];
  let batches = 0;
  // A sink that says its buffer is full every other write: the pump must wait for drained() and lose nothing.
  const sink = {
    write: (t: string, encoding?: 'latin1') => {
      batches++;
      written.push(Buffer.from(t, encoding ?? 'utf8'));
      return batches % 2 === 0;
    },
    drained: () => new Promise<void>((resolve) => setImmediate(resolve)),
  };
  const upstream = Readable.from(split(body, cuts), { objectMode: false });
  const pump = text ? pumpRelayed(ctx, upstream, () => new TextRelayer(ctx, plan, opts)) : pumpText(ctx, upstream, plan, opts);
  const run = (error?: GatewayError): Run => {
    const bytes = Buffer.concat(written);
    return { text: bytes.toString(), bytes, usage: ctx.usage, batches, ...(error && { error }) };
  };
  try {
    await pump(sink);
  } catch (err) {
    return run(err as GatewayError);
  }
  return run();
}

/** A chat chunk as an upstream might write it: its own key order, spacing and escapes. */
const chunkText = (content: string, i: number, finish?: string) =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":${finish ? `"${finish}"` : 'null'},"logprobs":null}],"usage":null,"n":${i}.50}`;
const USAGE_CHUNK = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}';

test('plain events reach the client as the upstream wrote them, extra_fields spliced in; the usage chunk is metered and hidden unless asked for', async () => {
  const odd = '{ "choices" : [ { "index":0, "delta":{"content":"caf\\u00e9 \u00e9 \ud83d\ude00"}, "finish_reason":null } ] , "id":"x" }';
  const events = [chunkText('Hello', 0), odd, chunkText('', 2, 'stop'), USAGE_CHUNK];
  const body = events.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n';
  for (const includeUsage of [false, true]) {
    const run = await viaRelay(body, [7, 100, 101, 300], includeUsage);
    assert.equal(run.error, undefined);
    assert.deepEqual(run.usage, { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
    const frames = run.text.split('\n\n').filter(Boolean);
    const shown = includeUsage ? events : events.slice(0, 3);
    assert.equal(frames.length, shown.length);
    frames.forEach((frame, i) => {
      const tail = `,"extra_fields":${JSON.stringify({ ...extra, chunk_index: i })}}`;
      assert.ok(frame.endsWith(tail), frame);
      // Byte for byte the upstream's payload once the spliced member is taken out.
      assert.equal(`${frame.slice(0, -tail.length)}}`, `data: ${shown[i]}`);
    });
  }
});

/** Bytes that are not UTF-8 (a stray continuation byte, a cut two-byte sequence), where the text has INVALID. */
const INVALID = Buffer.from([0x49, 0x80, 0x4e, 0xc3, 0x56]);
const withInvalid = (body: string): Buffer => {
  const parts = body.split('INVALID').map((p) => Buffer.from(p));
  return Buffer.concat(parts.flatMap((p, i) => (i ? [INVALID, p] : [p])));
};

test('any framing and any split: the relays write exactly what the item path writes, with the same usage', async () => {
  const content = fc.string({ unit: 'grapheme', maxLength: 12 });
  const event = fc.oneof(
    content.map((c) => ({ kind: 'plain', data: chunkText(c, 1) })),
    content.map((c) => ({ kind: 'plain', data: `${chunkText(c, 2)}  ` })),
    fc.constant({ kind: 'usage', data: USAGE_CHUNK }),
    fc.constant({ kind: 'finish', data: chunkText('', 3, 'length') }),
    fc.constant({ kind: 'comment', data: '' }),
    content.map((c) => ({ kind: 'named', data: chunkText(c, 4) })),
    content.map((c) => ({ kind: 'multiline', data: chunkText(c, 5) })),
    // JSON's own spaces around the members; a non-ASCII space, which the text's \s takes and JSON does not.
    content.map((c) => ({ kind: 'plain', data: `{ "choices" :\t[{"index":0,"delta":{"content":${JSON.stringify(c)}}}], "usage" : null }` })),
    fc.constant({ kind: 'plain', data: '{"choices"\u00a0:[{"index":0,"delta":{"content":"x"}}]}' }),
    fc.constant({ kind: 'plain', data: '{"choices":[],"usage"\u00a0:{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}' }),
    // A byte-order mark inside an event, and bytes that are not UTF-8.
    fc.constant({ kind: 'plain', data: chunkText('\ufeff\u00e9', 6) }),
    fc.constant({ kind: 'plain', data: chunkText('INVALID', 7) }),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(event, { maxLength: 8 }),
      fc.constantFrom('\n', '\r\n', 'mixed'),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
      fc.array(fc.nat({ max: 4000 }), { maxLength: 6 }),
      async (events, framing, done, includeUsage, unclosed, bom, cuts) => {
        // Mixed: LF-ended events first, CRLF from the middle on.
        const eolOf = (i: number) => (framing !== 'mixed' ? framing : i < events.length / 2 ? '\n' : '\r\n');
        const eol = eolOf(events.length);
        const frame = (e: { kind: string; data: string }, i: number) => {
          const eol = eolOf(i);
          if (e.kind === 'comment') return `: keep-alive${eol}${eol}`;
          if (e.kind === 'named') return `event: chunk${eol}data: ${e.data}${eol}${eol}`;
          if (e.kind === 'multiline') return `data: ${e.data.slice(0, 20)}${eol}data:${e.data.slice(20)}${eol}${eol}`;
          return `data: ${e.data}${eol}${eol}`;
        };
        const full = (bom ? '\ufeff' : '') + events.map(frame).join('') + (done ? `data: [DONE]${eol}${eol}` : '');
        // The upstream may end without the last blank line: the last event still counts.
        const body = withInvalid(unclosed && full ? full.slice(0, -eol.length) : full);
        const [items, relay, pumped, pumpedText] = await Promise.all([
          viaItems(body, cuts, includeUsage),
          viaRelay(body, cuts, includeUsage),
          viaPump(body, cuts, includeUsage),
          viaPump(body, cuts, includeUsage, {}, true),
        ]);
        assert.equal(relay.text, items.text);
        assert.deepEqual(relay.usage, items.usage);
        assert.equal(relay.error?.message, items.error?.message);
        for (const run of [pumped, pumpedText]) {
          assert.deepEqual(run.bytes, Buffer.from(items.text));
          assert.deepEqual(run.usage, items.usage);
          assert.equal(run.error?.message, items.error?.message);
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('the byte relay and the text relay: the same bytes to the client and the same usage, however the reads split the events', async () => {
  const events = [chunkText('Hello', 0), chunkText('caf\u00e9 \ud83d\ude00 \u4e2d\u6587', 1), chunkText(' world', 2), chunkText('', 3, 'stop'), USAGE_CHUNK];
  const body = Buffer.from(events.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n');
  const at = (needle: string, from = 0) => body.indexOf(needle, from);
  const emoji = at('\ud83d\ude00');
  const usage = at('"usage":{');
  const chunkings: Record<string, number[]> = {
    'one read': [],
    'a read per event': events.map((_, i) => at('data: ', i ? at('data: ') + 1 + i : 0)).filter((x) => x > 0),
    'events split across reads': [20, 250, 251, 400, 700],
    'between the two line ends of a blank line': [at('\n\n') + 1, at('\n\n', at('\n\n') + 2) + 1],
    'inside a multibyte character': [emoji + 1, emoji + 2, emoji + 3, at('\u00e9') + 1, at('\u4e2d') + 2],
    'inside the usage chunk': [usage - 3, usage + 4, usage + 30],
    'every byte': Array.from({ length: body.length }, (_, i) => i + 1),
  };
  for (const includeUsage of [false, true]) {
    const expected = await viaItems(body, [], includeUsage);
    assert.deepEqual(expected.usage, { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
    for (const [name, cuts] of Object.entries(chunkings)) {
      const bytes = await viaPump(body, cuts, includeUsage);
      const text = await viaPump(body, cuts, includeUsage, {}, true);
      assert.equal(bytes.error, undefined, name);
      assert.deepEqual(bytes.bytes, text.bytes, name);
      assert.deepEqual(bytes.bytes, Buffer.from(expected.text), name);
      assert.deepEqual(bytes.usage, text.usage, name);
      assert.deepEqual(bytes.usage, expected.usage, name);
    }
  }
});

test('an in-band error after some chunks: what was ready goes out, then the upstream error; before any chunk: the error alone', async () => {
  const error = '{"error":{"message":"overloaded","type":"server_error","code":null}}';
  const late = await viaRelay(`data: ${chunkText('a', 0)}\n\ndata: ${error}\n\n`, [], false);
  assert.ok(late.error instanceof GatewayError);
  assert.equal(late.error.message, (await viaItems(`data: ${chunkText('a', 0)}\n\ndata: ${error}\n\n`, [], false)).error?.message);
  assert.match(late.error.message, /overloaded/);
  assert.equal(late.text.split('\n\n').filter(Boolean).length, 1);
  const early = await viaRelay(`data: ${error}\n\n`, [], false);
  assert.ok(early.error instanceof GatewayError);
  assert.equal(early.batches, 0);
  assert.equal(early.text, '');
  // Pushed: the same, and nothing written before an early error (the answer can still be its status).
  const latePumped = await viaPump(`data: ${chunkText('a', 0)}\n\ndata: ${error}\n\n`, [], false);
  assert.equal(latePumped.error?.message, late.error.message);
  assert.equal(latePumped.text, late.text);
  const earlyPumped = await viaPump(`data: ${error}\n\n`, [], false);
  assert.equal(earlyPumped.error?.message, early.error.message);
  assert.equal(earlyPumped.batches, 0);
});

test('an event over max_stream_event_size_mb is cut off with the 502 the item path gives, whether or not it arrives whole', async () => {
  const big = `data: ${chunkText('x'.repeat(5000), 0)}\n\n`;
  for (const cuts of [[], [10, 2000, 4000]]) {
    const relay = await viaRelay(big, cuts, false, { maxEventBytes: 1024 });
    const items = await viaItems(big, cuts, false, { maxEventBytes: 1024 });
    assert.equal(relay.error?.status, 502);
    assert.equal(relay.error?.type, 'upstream_response_too_large');
    assert.equal(relay.error?.message, items.error?.message);
    assert.equal(relay.text, '');
    const pumped = await viaPump(big, cuts, false, { maxEventBytes: 1024 });
    assert.equal(pumped.error?.message, items.error?.message);
    assert.equal(pumped.text, '');
  }
});

test('the relay steps aside when something needs the items: a tap, raw capture, a final extra_fields', () => {
  const plan = passthroughChunkPlan(false);
  assert.ok(relayable(context(), plan, options()));
  const tapped = context();
  tapped.taps = [{ name: 'logging', tap: () => undefined }];
  assert.equal(relayable(tapped, plan, options()), false);
  assert.equal(relayable(context(), plan, options({ rawResponse: true })), false);
  assert.equal(relayable(context(), plan, options({ rawRequest: { model: 'gpt-4o' } })), false);
  const cached = context();
  cached.finalExtra = { cache_debug: { cache_hit: false } };
  assert.equal(relayable(cached, plan, options()), false);
});
