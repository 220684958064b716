// Every rule of cache.test.ts again, end to end through gateways, on PostgreSQL with pgvector instead of the embedded store.
process.env.SKYBRIDGE_CACHE_TEST_STORE = 'postgres';
await import('./cache.test.ts');
