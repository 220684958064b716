// A gateway child process in front of one mock server playing OpenAI, Anthropic and Gemini, plus an
// OpenAI SDK client pointed at the gateway: for tests that watch the process (its output, that it
// stays up). Others start the same stack in process (in-process-gateway.ts).
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from './gateway.ts';
import { mockProviders } from './providers.ts';

export interface Stack {
  mock: MockProvider;
  gateway: RunningGateway;
  client: OpenAI;
  close(): Promise<void>;
}

export async function startStack(config: (mockUrl: string) => Record<string, unknown> = (u) => ({ providers: mockProviders(u) })): Promise<Stack> {
  const mock = await startMockProvider();
  // A gateway that did not start must not leave the mock open: it would keep the file's process alive.
  const gateway = await startGateway(config(mock.url)).catch(async (err: unknown) => {
    await mock.close();
    throw err;
  });
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
