// Public entry point of the mock upstream provider.

export { startMockProvider } from './server.ts';
export type { Fault, Format, MockProvider, MockProviderOptions, RecordedRequest } from './types.ts';
