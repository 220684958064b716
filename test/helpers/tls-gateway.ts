// A gateway in process serving TLS (--tls-cert/--tls-key) with a certificate of a CA made for the
// test file, and the clients that trust that CA alone: an undici Agent for fetch, and the official
// SDK's realtime WebSocket client, which dials wss: only. The realtime tests share this setup.
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { Agent } from 'undici';
import { startGateway, type InProcessGateway } from './in-process-gateway.ts';
import { makeTestCa, type TestCa } from './test-ca.ts';

export interface TlsGateway {
  gw: InProcessGateway;
  ca: TestCa;
  /** An undici dispatcher trusting the CA (`fetch(url, { dispatcher: agent })`). */
  agent: Agent;
  /** The SDK's realtime client on the gateway, trusting the CA; `prefix` is the base URL's path. */
  realtime(key: string, model: string, prefix?: string): OpenAIRealtimeWS;
  /** Stops the gateway and closes the agent. */
  stop(): Promise<void>;
}

export async function startTlsGateway(config: unknown): Promise<TlsGateway> {
  const ca = makeTestCa();
  const files = ca.issue('gateway');
  const agent = new Agent({ connect: { ca: ca.pem } });
  const gw = await startGateway(config, { args: ['--tls-cert', files.cert, '--tls-key', files.key] });
  return {
    gw,
    ca,
    agent,
    realtime: (key, model, prefix = '/v1') => new OpenAIRealtimeWS({ model, options: { ca: ca.pem } }, new OpenAI({ baseURL: `${gw.url}${prefix}`, apiKey: key, maxRetries: 0 })),
    stop: async () => {
      await gw.stop();
      await agent.close();
    },
  };
}
