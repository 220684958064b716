// One mock server playing OpenAI, Anthropic and Gemini, a gateway in front of it (in process or a
// child process: the caller's `start`), and an OpenAI SDK client pointed at the gateway.
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { closeAtEnd } from './cleanup.ts';
import { mockProviders } from './providers.ts';

export interface StackOf<G> {
  mock: MockProvider;
  gateway: G;
  client: OpenAI;
  close(): Promise<void>;
}

export type StackConfig = (mockUrl: string) => Record<string, unknown>;

const DEFAULT_CONFIG: StackConfig = (u) => ({ providers: mockProviders(u) });

export async function stackWith<G extends { url: string; stop(): Promise<void> }>(
  start: (config: Record<string, unknown>) => Promise<G>,
  config: StackConfig = DEFAULT_CONFIG,
): Promise<StackOf<G>> {
  const mock = await startMockProvider();
  // Closed at the end of the file even when the gateway does not start: an open mock keeps the file's process alive.
  const closeMock = closeAtEnd(() => mock.close());
  const gateway = await start(config(mock.url));
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
  return {
    mock,
    gateway,
    client,
    close: async () => {
      await gateway.stop();
      await closeMock();
    },
  };
}
