import type { FormatAdapter } from './adapter.ts';
import type { WireFormat } from './catalog.ts';
import { openaiAdapter } from './openai/adapter.ts';
import { anthropicAdapter } from './anthropic/adapter.ts';
import { geminiAdapter } from './gemini/adapter.ts';
import { bedrockAdapter } from './bedrock/adapter.ts';
import { cohereAdapter } from './cohere/adapter.ts';
import { vertexAdapter } from './vertex/adapter.ts';
import { azureAdapter } from './azure/adapter.ts';

export const ADAPTERS: Readonly<Record<WireFormat, FormatAdapter>> = {
  openai: openaiAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
  bedrock: bedrockAdapter,
  cohere: cohereAdapter,
  vertex: vertexAdapter,
  azure: azureAdapter,
};
