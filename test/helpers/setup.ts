// A gateway in front of one mock server playing OpenAI, Anthropic and Gemini, plus an OpenAI SDK
// client pointed at the gateway: what most integration tests start from.
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from './gateway.ts';

export interface Stack {
  mock: MockProvider;
  gateway: RunningGateway;
  client: OpenAI;
  close(): Promise<void>;
}

export type ProviderOverrides = Record<string, Record<string, unknown>>;

export function mockProviders(mockUrl: string, overrides: ProviderOverrides = {}): Record<string, unknown> {
  const provider = (format: string, name = format) => ({
    keys: [{ name: `${name}-key`, value: `sk-${name}-test`, weight: 1 }],
    network_config: { base_url: `${mockUrl}/${format}`, max_retries: 0 },
    ...overrides[name],
  });
  return { openai: provider('openai'), anthropic: provider('anthropic'), gemini: provider('gemini') };
}

export async function startStack(config: (mockUrl: string) => Record<string, unknown> = (u) => ({ providers: mockProviders(u) })): Promise<Stack> {
  const mock = await startMockProvider();
  const gateway = await startGateway(config(mock.url));
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
  return {
    mock,
    gateway,
    client,
    close: async () => {
      await gateway.stop();
      await mock.close();
    },
  };
}

/** The model each mock format answers for, as `provider/model`. */
export const MODELS = {
  openai: 'openai/gpt-4o',
  anthropic: 'anthropic/claude-sonnet-4-5',
  gemini: 'gemini/gemini-2.5-flash',
} as const;

export const FORMATS = ['openai', 'anthropic', 'gemini'] as const;
