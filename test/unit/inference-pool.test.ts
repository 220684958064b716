// InferencePool providers, the pure parts: which server gets a request (picker.ts), the load a vLLM
// metrics page reports (metrics-text.ts), the servers a pool's EndpointSlices list (endpoints.ts),
// and the configuration rules for `network_config.inference_pool`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KV_CACHE_SATURATED, pickServer, type Candidate } from '../../proxy/src/inference-pool/picker.ts';
import { parseServerLoad } from '../../proxy/src/inference-pool/metrics-text.ts';
import { poolServers } from '../../proxy/src/inference-pool/endpoints.ts';
import { PoolSource } from '../../proxy/src/inference-pool/registry.ts';
import { checkConfig, ConfigError } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { metricsText } from '../mock-provider/vllm-metrics.ts';

const fresh = (waiting: number, kvCache = 0.1, inFlight = 0): Candidate => ({ fresh: true, waiting, kvCache, inFlight });
const stale = (inFlight = 0): Candidate => ({ fresh: false, inFlight });

/** Indexes chosen by `n` picks with the counter advancing, as a source does. */
const picks = (candidates: Candidate[], n: number) => Array.from({ length: n }, (_, rr) => pickServer(candidates, rr)?.index);

describe('picker', () => {
  test('no server: nothing to pick', () => {
    assert.equal(pickServer([], 0), undefined);
  });

  test('the shortest queue wins while its report is fresh', () => {
    assert.deepEqual(pickServer([fresh(5), fresh(0), fresh(3)], 7), { index: 1, how: 'least_loaded' });
    assert.deepEqual(picks([fresh(5), fresh(0), fresh(3)], 4), [1, 1, 1, 1]);
  });

  test("this proxy's own requests in flight count as queued: a burst spreads instead of piling onto one server", () => {
    // Server 1 reported an empty queue, but this proxy already sent it 4 requests the report does not show.
    assert.equal(pickServer([fresh(2), fresh(0, 0.1, 4), fresh(3)], 0)?.index, 0);
  });

  test('a saturated KV cache is passed over while another server has room, even with a shorter queue', () => {
    assert.equal(pickServer([fresh(0, KV_CACHE_SATURATED), fresh(2, 0.5)], 0)?.index, 1);
    // Every cache saturated: the queue decides again.
    assert.equal(pickServer([fresh(0, 0.95), fresh(2, 0.97)], 0)?.index, 0);
  });

  test('equal queues: the lower KV-cache use, then in turn', () => {
    assert.equal(pickServer([fresh(1, 0.6), fresh(1, 0.2), fresh(1, 0.4)], 0)?.index, 1);
    assert.deepEqual(picks([fresh(1, 0.3), fresh(4, 0.3), fresh(1, 0.3)], 4), [0, 2, 0, 2]);
  });

  test('no fresh report from any server: round robin over all of them', () => {
    const p = picks([stale(), stale(3), stale()], 6);
    assert.deepEqual(p, [0, 1, 2, 0, 1, 2]);
    assert.equal(pickServer([stale(), stale()], 1)?.how, 'round_robin');
  });

  test('some fresh, some not: only servers whose load is known are chosen', () => {
    assert.deepEqual(picks([stale(), fresh(9), stale()], 3), [1, 1, 1]);
  });
});

describe('metrics page', () => {
  test("vLLM's page: queue depth and KV-cache use", () => {
    assert.deepEqual(parseServerLoad(metricsText({ waiting: 7, kvCache: 0.42 })), { waiting: 7, kvCache: 0.42 });
  });

  test('the gauge name before vLLM 0.10 (gpu_cache_usage_perc) is read too', () => {
    assert.deepEqual(parseServerLoad(metricsText({ waiting: 1, kvCache: 0.9, legacyKvName: true })), { waiting: 1, kvCache: 0.9 });
  });

  test('several engines: queues add up, the fullest cache counts; labels with spaces and braces are skipped over', () => {
    const text = [
      'vllm:num_requests_waiting{engine="0",model_name="a b {c}"} 2.0',
      'vllm:num_requests_waiting{engine="1",model_name="a b {c}"} 3.0 1712345678000',
      'vllm:kv_cache_usage_perc{engine="0"} 0.25',
      'vllm:kv_cache_usage_perc{engine="1"} 0.75',
      'vllm:num_requests_running{engine="0"} 9',
    ].join('\n');
    assert.deepEqual(parseServerLoad(text), { waiting: 5, kvCache: 0.75 });
  });

  test('no series, or values that are not numbers: nothing known', () => {
    assert.deepEqual(parseServerLoad('# HELP x\nprocess_cpu_seconds_total 12\n'), {});
    assert.deepEqual(parseServerLoad('vllm:num_requests_waiting{} NaN\nvllm:kv_cache_usage_perc\n'), {});
    assert.deepEqual(parseServerLoad(''), {});
  });
});

describe('servers from EndpointSlices', () => {
  test('each ready address on each target port its slice serves; a slice without ports serves all of them', () => {
    const { servers, refused } = poolServers([8000, 8001], [
      { addressType: 'IPv4', ports: [{ port: 8000 }], endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }, { addresses: ['10.0.0.2'] }] },
      { addressType: 'IPv6', endpoints: [{ addresses: ['fd00::7', 'fd00::8'] }] },
    ]);
    assert.deepEqual(servers.map((s) => s.origin), ['http://10.0.0.1:8000', 'http://10.0.0.2:8000', 'http://[fd00::7]:8000', 'http://[fd00::7]:8001']);
    assert.deepEqual(refused, []);
  });

  test('not ready, terminating, FQDN slices and ports outside the pool are left out', () => {
    const { servers } = poolServers([8000], [
      { addressType: 'IPv4', ports: [{ port: 8000 }], endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: false } }, { addresses: ['10.0.0.2'], conditions: { ready: true, terminating: true } }, { addresses: ['10.0.0.3'] }] },
      { addressType: 'IPv4', ports: [{ port: 9090 }], endpoints: [{ addresses: ['10.0.0.4'] }] },
      { addressType: 'FQDN', endpoints: [{ addresses: ['model.example.com'] }] },
    ]);
    assert.deepEqual(servers.map((s) => s.origin), ['http://10.0.0.3:8000']);
  });

  test('a cloud metadata address is refused by the egress rule, and said why', () => {
    const { servers, refused } = poolServers([80], [{ addressType: 'IPv4', endpoints: [{ addresses: ['100.100.100.200'] }, { addresses: ['10.1.2.3'] }] }]);
    assert.deepEqual(servers.map((s) => s.origin), ['http://10.1.2.3:80']);
    assert.match(refused[0], /metadata/);
  });
});

describe('configuration', () => {
  const errorsOf = (config: unknown): string[] => {
    try {
      checkConfig(config, 'test');
      return [];
    } catch (err) {
      return (err as ConfigError).errors.map((e) => `${e.path}: ${e.message}`);
    }
  };

  test('vllm with a pool needs no base_url; a custom OpenAI-format provider neither', () => {
    assert.deepEqual(errorsOf({ providers: { vllm: { network_config: { inference_pool: { name: 'llama', namespace: 'models' } } } } }), []);
    assert.deepEqual(errorsOf({ providers: { llama: { custom_provider_config: { base_provider_type: 'openai', is_key_less: true }, network_config: { inference_pool: { name: 'llama' } } } } }), []);
  });

  test('a pool on a provider of another format, and bad pool fields, are refused naming the field', () => {
    assert.match(errorsOf({ providers: { anthropic: { keys: [{ name: 'k', value: 'x' }], network_config: { inference_pool: { name: 'llama' } } } } }).join('\n'), /providers\.anthropic\.network_config\.inference_pool: is for OpenAI-compatible model servers/);
    assert.match(errorsOf({ providers: { vllm: { network_config: { inference_pool: { name: 'Llama_Pool' } } } } }).join('\n'), /inference_pool\/name|inference_pool\.name/);
    assert.match(errorsOf({ providers: { vllm: { network_config: { inference_pool: { name: 'llama', scrape_interval_ms: 10 } } } } }).join('\n'), /scrape_interval_ms/);
    assert.match(errorsOf({ providers: { vllm: { network_config: { inference_pool: { name: 'llama', selector: {} } } } } }).join('\n'), /selector/);
  });

  test('compiled: the provider gets an endpoint source; outside a gateway it says discovery is not running', () => {
    const snapshot = compileSnapshot(checkConfig({ providers: { vllm: { network_config: { inference_pool: { name: 'llama', namespace: 'models' } } } } }, 'test').config);
    const source = snapshot.providers.get('vllm')?.endpoints;
    assert.equal(source?.id, 'models/llama');
    assert.deepEqual(source?.pick(), { error: 'InferencePool models/llama: endpoint discovery is not running in this process' });
    assert.equal(compileSnapshot(checkConfig({ providers: { vllm: {} } }, 'test').config).providers.get('vllm')?.endpoints, undefined);
  });
});

describe('pool state (what the served report says of the pool)', () => {
  const ref = { name: 'llama', namespace: 'models' };
  const spec = { matchLabels: { app: 'llama' }, targetPorts: [8000] };
  const source = () => new PoolSource(ref, () => Promise.resolve({ namespace: 'models', stop: () => Promise.resolve() }));

  test('the pool read before its EndpointSlices is still starting, not "no ready endpoint"', async () => {
    const pool = source();
    try {
      pool.pool(spec);
      assert.equal(pool.report().state, 'starting');
      pool.slices([{ addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }] }]);
      assert.equal(pool.report().state, 'ready');
    } finally {
      await pool.stop();
    }
  });

  test('a pool created after it was missing is missing until its EndpointSlices are read', async () => {
    const pool = source();
    try {
      pool.pool(undefined);
      pool.slices([]); // no selector: nothing to follow
      assert.equal(pool.report().state, 'missing');
      pool.pool(spec);
      assert.equal(pool.report().state, 'missing', 'the slices read were for no selector, not for this one');
      pool.slices([{ addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }] }]);
      assert.equal(pool.report().state, 'ready');
    } finally {
      await pool.stop();
    }
  });

  test('EndpointSlices that cannot be read stay the reason across each re-list of the pool', async () => {
    const pool = source();
    try {
      pool.pool(spec);
      const seen = new Set<string>();
      // The slices' list fails and is retried; the pool's watch ends and lists again meanwhile.
      for (let i = 0; i < 3; i++) {
        pool.error('the EndpointSlices of InferencePool models/llama (selector app=llama) cannot be read: 403');
        seen.add(`${pool.report().state}: ${pool.report().message}`);
        pool.pool(spec);
        seen.add(`${pool.report().state}: ${pool.report().message}`);
      }
      assert.deepEqual([...seen], ['error: the EndpointSlices of InferencePool models/llama (selector app=llama) cannot be read: 403']);
      // Read at last, and empty: that is the news.
      pool.slices([]);
      assert.equal(pool.report().state, 'empty');
      assert.match(pool.report().message ?? '', /has no ready endpoint/);
    } finally {
      await pool.stop();
    }
  });
});
