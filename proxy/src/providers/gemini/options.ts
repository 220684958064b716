// Request options other than the conversation: tools, tool choice, generationConfig.
import type { ChatRequest, ReasoningEffort, Tool, ToolChoice } from '../../unified/chat.ts';
import type { GeminiGenerationConfig, GeminiThinkingConfig, GeminiTool, GeminiToolConfig } from './types.ts';

/**
 * Tools go out as `parametersJsonSchema` (plain JSON Schema, accepted verbatim by v1beta) rather than
 * the OpenAPI-subset `parameters`, so `additionalProperties`, `anyOf`, `$ref`/`$defs` survive without a
 * lossy rewrite. Only the top-level `$schema` marker is dropped: it is not part of the supported set.
 */
export function toGeminiTools(tools: Tool[] | undefined): GeminiTool[] | undefined {
  if (!tools?.length) return undefined;
  return [
    {
      functionDeclarations: tools.map(({ function: fn }) => {
        const params = fn.parameters ? withoutSchemaMarker(fn.parameters) : undefined;
        return {
          name: fn.name,
          ...(fn.description !== undefined && { description: fn.description }),
          ...(params && { parametersJsonSchema: params }),
        };
      }),
    },
  ];
}

function withoutSchemaMarker(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

export function toGeminiToolConfig(choice: ToolChoice | undefined): GeminiToolConfig | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

/**
 * Effort levels as thinking budgets. Chosen to fit every Gemini 2.5 model's accepted range
 * (Flash/Flash-Lite cap at 24576, Flash-Lite's floor is 512), so `xhigh` saturates at `high`.
 */
export const EFFORT_BUDGETS: Record<ReasoningEffort, number> = {
  none: 0,
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24576,
  xhigh: 24576,
};

export function toThinkingConfig(req: ChatRequest): GeminiThinkingConfig | undefined {
  const budget = req.reasoning?.max_tokens ?? effortBudget(req.reasoning?.effort ?? req.reasoning_effort);
  if (budget === undefined) return undefined;
  // With thinking off there are no thoughts to include.
  return budget > 0 ? { thinkingBudget: budget, includeThoughts: true } : { thinkingBudget: 0 };
}

function effortBudget(effort: ReasoningEffort | undefined): number | undefined {
  return effort === undefined ? undefined : EFFORT_BUDGETS[effort];
}

export function toGenerationConfig(req: ChatRequest): GeminiGenerationConfig | undefined {
  const config: GeminiGenerationConfig = {};
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.top_p !== undefined) config.topP = req.top_p;
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (req.stop !== undefined) config.stopSequences = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (req.n !== undefined) config.candidateCount = req.n;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.presence_penalty !== undefined) config.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) config.frequencyPenalty = req.frequency_penalty;
  Object.assign(config, responseFormat(req.response_format));
  const thinking = toThinkingConfig(req);
  if (thinking) config.thinkingConfig = thinking;
  return Object.keys(config).length ? config : undefined;
}

/** OpenAI response_format → JSON mode, with the schema as plain JSON Schema when one is given. */
function responseFormat(format: Record<string, unknown> | undefined): GeminiGenerationConfig {
  if (format?.type === 'json_object') return { responseMimeType: 'application/json' };
  if (format?.type === 'json_schema') {
    const schema = (format.json_schema as { schema?: unknown } | undefined)?.schema;
    return isObject(schema)
      ? { responseMimeType: 'application/json', responseJsonSchema: withoutSchemaMarker(schema) }
      : { responseMimeType: 'application/json' };
  }
  return {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
