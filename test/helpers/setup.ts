// A gateway child process in front of one mock server playing OpenAI, Anthropic and Gemini, plus an
// OpenAI SDK client pointed at the gateway: for tests that watch the process (its output, that it
// stays up). Others start the same stack in process (in-process-gateway.ts).
import { startGateway, type RunningGateway } from './gateway.ts';
import { stackWith, type StackConfig, type StackOf } from './stack.ts';

export type Stack = StackOf<RunningGateway>;

export function startStack(config?: StackConfig): Promise<Stack> {
  return stackWith(startGateway, config);
}
