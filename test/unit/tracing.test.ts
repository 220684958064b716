// Tracing's pure parts: settings from the otel plugin entry and the OTel variables (config wins,
// the variables fill in, a bad value names its field or variable), the config check of the plugin,
// W3C traceparent parsing, and that a gateway without tracing never loads the OTel SDK.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { checkConfig, ConfigError } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { tracingSettings, TracingSettingsError } from '../../proxy/src/tracing/settings.ts';
import { formatTraceparent, parseTraceparent } from '../../proxy/src/tracing/traceparent.ts';
import { createServices } from '../../proxy/src/services.ts';

const otel = (config: Record<string, unknown>, enabled = true) => ({ plugins: [{ name: 'otel', enabled, config }] });
const errorOf = (f: () => unknown): TracingSettingsError => {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof TracingSettingsError, String(err));
    return err;
  }
  assert.fail('no error');
};

test('off without a plugin entry or an endpoint variable; a disabled entry wins over the variables', () => {
  assert.equal(tracingSettings({}, {}), undefined);
  assert.equal(tracingSettings(otel({ collector_url: 'http://c:4318' }, false), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }), undefined);
  assert.equal(tracingSettings(otel({ collector_url: 'http://c:4318' }), { OTEL_SDK_DISABLED: 'true' }), undefined);
  assert.equal(tracingSettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_TRACES_EXPORTER: 'none' }), undefined);
});

test("the reference's otel config: HTTP gets /v1/traces when the URL has no path, gRPC takes host:port", () => {
  const http = tracingSettings(otel({ collector_url: 'http://collector:4318', trace_type: 'otel', protocol: 'http', service_name: 'gw' }), {})!;
  assert.equal(http.protocol, 'http/protobuf');
  assert.equal(http.endpoint, 'http://collector:4318/v1/traces');
  assert.equal(http.serviceName, 'gw');
  assert.equal(http.sampler, 'parentbased_always_on');
  assert.equal(http.captureContent, false);
  assert.equal(tracingSettings(otel({ collector_url: 'https://c.example/otlp/v1/traces', protocol: 'http' }), {})!.endpoint, 'https://c.example/otlp/v1/traces');
  const grpc = tracingSettings(otel({ collector_url: 'collector:4317', protocol: 'grpc' }), {})!;
  assert.equal(grpc.protocol, 'grpc');
  assert.equal(grpc.endpoint, 'http://collector:4317');
  assert.equal(grpc.insecure, true);
  assert.equal(errorOf(() => tracingSettings(otel({ collector_url: 'collector:4317', protocol: 'http' }), {})).path, 'plugins[0].config.collector_url');
});

test('the OTel variables fill what config leaves out, and alone turn tracing on', () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318/',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20t0ken,x-tenant=a',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    OTEL_SERVICE_NAME: 'from-env',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
  };
  const s = tracingSettings({}, env)!;
  assert.equal(s.endpoint, 'http://base:4318/v1/traces');
  assert.deepEqual(s.headers, { authorization: 'Bearer t0ken', 'x-tenant': 'a' });
  assert.equal(s.sampler, 'parentbased_traceidratio');
  assert.equal(s.ratio, 0.25);
  assert.equal(s.serviceName, 'from-env');
  assert.deepEqual(s.resource, { 'deployment.environment': 'prod' });
  assert.equal(tracingSettings({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/custom' })!.endpoint, 'http://t:4318/custom');
  // Config wins where both speak.
  const both = tracingSettings(otel({ collector_url: 'http://cfg:4318', service_name: 'cfg', sampler: 'always_off' }), env)!;
  assert.equal(both.endpoint, 'http://cfg:4318/v1/traces');
  assert.equal(both.serviceName, 'cfg');
  assert.equal(both.sampler, 'always_off');
  // An entry without collector_url takes the variable's endpoint; with neither, the field is named.
  assert.equal(tracingSettings(otel({}), env)!.endpoint, 'http://base:4318/v1/traces');
  assert.equal(errorOf(() => tracingSettings(otel({}), {})).path, 'plugins[0].config.collector_url');
});

test('a bad variable is an error naming it, never echoing a header value', () => {
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' };
  assert.equal(errorOf(() => tracingSettings({}, { ...on, OTEL_TRACES_SAMPLER: 'sometimes' })).path, 'OTEL_TRACES_SAMPLER');
  assert.equal(errorOf(() => tracingSettings({}, { ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).path, 'OTEL_TRACES_SAMPLER_ARG');
  assert.equal(errorOf(() => tracingSettings({}, { ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).path, 'OTEL_EXPORTER_OTLP_PROTOCOL');
  assert.equal(errorOf(() => tracingSettings({}, { ...on, OTEL_TRACES_EXPORTER: 'zipkin' })).path, 'OTEL_TRACES_EXPORTER');
  assert.equal(errorOf(() => tracingSettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).path, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const bad = errorOf(() => tracingSettings({}, { ...on, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=%E0%A4%A-secret' }));
  assert.equal(bad.path, 'OTEL_EXPORTER_OTLP_HEADERS');
  assert.ok(!bad.message.includes('secret'));
});

test('the config check names the otel field at fault; metrics_* are accepted with a warning; headers take env references', () => {
  const fields = (config: Record<string, unknown>) => {
    try {
      checkConfig(otel(config), 'test', {});
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.errors.map((e) => e.path);
    }
    return [];
  };
  assert.deepEqual(fields({ collector_url: 'http://c:4318', protocol: 'udp' }), ['plugins[0].config.protocol']);
  assert.deepEqual(fields({ collector_url: 'not a url' }), ['plugins[0].config.collector_url']);
  assert.deepEqual(fields({ collector_url: 'http://c:4318', sampler_arg: 1.5 }), ['plugins[0].config.sampler_arg']);
  assert.deepEqual(fields({ collector_url: 'http://c:4318', exporter: 'x' }), ['plugins[0].config.exporter']);
  const twice = { plugins: [otel({ collector_url: 'http://c:4318' }).plugins[0], otel({ collector_url: 'http://d:4318' }).plugins[0]] };
  assert.throws(() => checkConfig(twice, 'test', {}), (err: ConfigError) => err.errors.some((e) => e.path === 'plugins[1].name'));
  const ok = checkConfig(otel({ collector_url: 'http://c:4318', metrics_enabled: true, headers: { authorization: 'env.OTEL_TOKEN' } }), 'test', { OTEL_TOKEN: 'Bearer abc' });
  assert.ok(ok.warnings.some((w) => w.includes('plugins[0].config.metrics_enabled')));
  assert.ok(!ok.warnings.some((w) => w.includes("plugin 'otel' is not built")));
  assert.equal((ok.config as { plugins: { config: { headers: Record<string, string> } }[] }).plugins[0].config.headers.authorization, 'Bearer abc');
});

test('traceparent: valid headers are read, invalid ones ignored (the request starts its own trace)', () => {
  const id = '4bf92f3577b34da6a3ce929d0e0e4736';
  const span = '00f067aa0ba902b7';
  assert.deepEqual(parseTraceparent(`00-${id}-${span}-01`, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'), { traceId: id, spanId: span, flags: 1, state: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' });
  assert.equal(parseTraceparent(`00-${id}-${span}-00`, undefined)?.flags, 0);
  // A later version may add fields; version 00 may not.
  assert.equal(parseTraceparent(`01-${id}-${span}-01-extra`, undefined)?.traceId, id);
  for (const bad of [`00-${id}-${span}-01-extra`, `ff-${id}-${span}-01`, `00-${'0'.repeat(32)}-${span}-01`, `00-${id}-${'0'.repeat(16)}-01`, `00-${id.toUpperCase()}-${span}-01`, 'garbage']) {
    assert.equal(parseTraceparent(bad, undefined), undefined, bad);
  }
  assert.equal(parseTraceparent([`00-${id}-${span}-01`, `00-${id}-${span}-01`], undefined), undefined, 'two traceparent headers');
  assert.equal(parseTraceparent(`00-${id}-${span}-01`, 'not a list member')?.state, undefined);
  assert.equal(formatTraceparent(id, span, 1), `00-${id}-${span}-01`);
});

test('with tracing off, building a snapshot\'s stages loads nothing of the OTel SDK and adds no stage', () => {
  const services = createServices();
  const snapshot = compileSnapshot(checkConfig({ providers: { openai: { keys: [{ name: 'k', value: 'v' }] } } }, 'test', {}).config);
  const list = services.pipeline.stages(snapshot);
  assert.ok(![...list.caller, ...list.afters].some((s) => s.name === 'tracing'));
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((p) => p.includes('@opentelemetry/sdk-trace') || p.includes('@opentelemetry/exporter'));
  assert.deepEqual(loaded, []);
});
