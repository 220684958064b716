// POST /v1/responses: native where the provider has a responses API, otherwise bridged over chat
// (request → chat request, chat answer or chunks → responses object or events).
import { validated } from '../http/body.ts';
import { nullsAbsent } from '../unified/nulls.ts';
import { ResponsesRequestSchema, type ResponsesObject, type ResponsesRequest, type ResponsesStreamEvent, type ResponsesUsage } from '../unified/responses.ts';
import { responsesToChat } from '../unified/responses-bridge/request.ts';
import { chatToResponses } from '../unified/responses-bridge/response.ts';
import { createResponsesStreamEncoder, encodeResponsesEvent } from '../unified/responses-bridge/stream.ts';
import type { ExtraFields, Usage } from '../unified/chat.ts';
import { requireOperation } from '../unified/errors.ts';
import { toUpstreamBody } from '../providers/openai/adapter.ts';
import type { StreamPlan } from '../pipeline/stream.ts';
import type { Attempted } from '../pipeline/invoke.ts';
import { readJson, type OperationSpec } from './inference.ts';
import { checkStringField, objectList } from '../unified/answer-shape.ts';

const parseResponses = nullsAbsent(validated(ResponsesRequestSchema));
const NATIVE = 'responses';

export const responsesSpec: OperationSpec<ResponsesRequest> = {
  read: (ctx) => readJson(ctx, parseResponses),
  spec: (request, ctx) => {
    const stream = request.stream === true;
    const relayText = ctx.http !== undefined;
    return {
      requestType: stream ? 'responses_stream' : 'responses',
      modelRequested: request.model,
      build: (t, adapter) => {
        requireOperation(t.provider, 'responses');
        if (t.provider.kind.nativeResponses) {
          return { method: 'POST', path: '/responses', requestType: NATIVE, body: toUpstreamBody(request, t.model), stream };
        }
        return adapter.chatRequest(responsesToChat(request), t.model, stream);
      },
      parse: (body, att, ids) =>
        att.up.requestType === NATIVE
          ? nativeAnswer(body)
          : chatToResponses(att.adapter.chatResponse(body, ids), request, responseIds(ids)),
      usage: (u) => fromResponsesUsage(u as ResponsesUsage | undefined),
      passthrough: (att) => relayText && att.up.requestType === NATIVE,
      stream: stream ? (att, ids) => responsesStreamPlan(att, request, responseIds(ids)) : undefined,
    };
  },
};

/** A native Responses object: an `output` list of items. */
function nativeAnswer(body: unknown): ResponsesObject {
  objectList(body, 'output');
  return body as ResponsesObject;
}

function responseIds(ids: { id: string; created: number }) {
  return { responseId: `resp_${ids.id.slice('chatcmpl-'.length).replace(/-/g, '')}`, createdAt: ids.created };
}

function responsesStreamPlan(att: Attempted, req: ResponsesRequest, ids: { responseId: string; createdAt: number }): StreamPlan<ResponsesStreamEvent> {
  const base = {
    encode: encodeResponsesEvent,
    done: '',
    usage: (ev: ResponsesStreamEvent) =>
      ev.type === 'response.completed' || ev.type === 'response.incomplete' ? fromResponsesUsage(ev.response.usage) : undefined,
    // The final response object: held to the end, where it takes a cache miss's cache_debug and any trailing raw payloads.
    terminal: (ev: ResponsesStreamEvent) => ev.type === 'response.completed' || ev.type === 'response.incomplete',
    visible: () => true,
    // Events carry no extra_fields; the final response object does.
    decorate: (ev: ResponsesStreamEvent, extra: ExtraFields) => {
      if (ev.type === 'response.completed' || ev.type === 'response.incomplete') (ev.response as ResponsesObject & { extra_fields?: ExtraFields }).extra_fields = extra;
    },
  };
  if (att.up.requestType === NATIVE) {
    let seq = 0;
    return {
      ...base,
      translator: {
        push: (e) => (e.data === '[DONE]' ? [] : [nativeEvent(e.data)]),
        finish: () => [],
      },
      errorEvent: (err) => encodeResponsesEvent({ type: 'error', sequence_number: seq++, code: err.code ?? err.type, message: err.message, param: err.param ?? null }),
    };
  }
  const chat = att.adapter.chatStream({ model: att.target.model, id: ids.responseId, created: ids.createdAt });
  const encoder = createResponsesStreamEncoder(req, ids);
  return {
    ...base,
    translator: {
      push: (e) => chat.push(e).flatMap((c) => encoder.push(c)),
      finish: () => [...chat.finish().flatMap((c) => encoder.push(c)), ...encoder.finish()],
    },
    errorEvent: (err) => encoder.fail({ message: err.message, code: err.code ?? err.type }).map(encodeResponsesEvent).join(''),
  };
}

/** A native Responses stream event: an object with a `type`. */
function nativeEvent(data: string): ResponsesStreamEvent {
  const ev = JSON.parse(data) as unknown;
  checkStringField(ev, 'type');
  return ev as ResponsesStreamEvent;
}

function fromResponsesUsage(u: ResponsesUsage | null | undefined): Usage | undefined {
  if (!u) return undefined;
  return { prompt_tokens: u.input_tokens, completion_tokens: u.output_tokens, total_tokens: u.total_tokens };
}
