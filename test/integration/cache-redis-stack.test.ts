// Every rule of cache.test.ts again, end to end through gateways, on Redis Stack (RediSearch) instead of the embedded store.
process.env.SKYBRIDGE_CACHE_TEST_STORE = 'redis';
await import('./cache.test.ts');
