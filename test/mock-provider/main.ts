// Standalone mock provider for demos and benchmarks:
//   npx node test/mock-provider/main.ts --port 9000 --latency 20 --chunk-delay 5

import { parseArgs } from 'node:util';
import { startMockProvider } from './server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9000' },
    host: { type: 'string', default: '127.0.0.1' },
    latency: { type: 'string', default: '0' },
    'chunk-delay': { type: 'string', default: '1' },
    'max-recorded': { type: 'string', default: '10000' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  process.stdout.write(
    'Usage: node test/mock-provider/main.ts [--port 9000] [--host 127.0.0.1] [--latency ms] [--chunk-delay ms] [--max-recorded n]\n',
  );
  process.exit(0);
}

function num(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) {
    process.stderr.write(`--${name} must be a non-negative number, got "${v}"\n`);
    process.exit(2);
  }
  return n;
}

const mock = await startMockProvider({
  port: num('port', values.port),
  host: values.host,
  latencyMs: num('latency', values.latency),
  chunkDelayMs: num('chunk-delay', values['chunk-delay']),
  maxRecordedRequests: num('max-recorded', values['max-recorded']),
});

process.stdout.write(
  `Mock provider listening on ${mock.url}\n` +
  `  openai:    ${mock.url}/openai   (also ${mock.url}/v1/...)\n` +
  `  anthropic: ${mock.url}/anthropic\n` +
  `  gemini:    ${mock.url}/gemini\n` +
  `  control:   ${mock.url}/_mock/faults | /_mock/requests\n`,
);

const stop = (): void => {
  mock.close().then(() => process.exit(0), () => process.exit(1));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
