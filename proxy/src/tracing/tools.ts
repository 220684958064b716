// A span per MCP tool call (the GenAI conventions' execute_tool), under the span that made the call
// (an agent's MCP stage) or the request it was made for, and its context sent to the MCP server as
// the call's `_meta` traceparent (the MCP convention for trace context). Arguments and results are
// never recorded: they are content.
import type { ToolCallWatcher } from '../mcp/manager.ts';
import { traceHeaders } from './traceparent.ts';
import type { TracingService } from './service.ts';

export function toolCallWatcher(service: TracingService): ToolCallWatcher {
  return ({ client, tool, requestId }) => {
    const t = service.current;
    if (!t) return undefined;
    const { api, tracer } = t.sdk;
    const parent = requestId !== undefined ? t.live.get(requestId)?.current() : undefined;
    const span = tracer.startOwn(`execute_tool ${tool}`, api.SpanKind.INTERNAL, parent, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.type': 'extension', 'skybridge.mcp.client': client });
    const sc = span.spanContext();
    return {
      meta: traceHeaders(sc.traceId, sc.spanId, sc.traceFlags, sc.traceState?.serialize()),
      end(outcome) {
        if (outcome.isError) {
          span.setAttribute('error.type', outcome.failure ?? 'tool_error');
          span.setStatus({ code: api.SpanStatusCode.ERROR });
        }
        span.end();
      },
    };
  };
}
