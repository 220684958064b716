// `POST /v1/realtime/calls` (and under the other OpenAI prefixes): a WebRTC call with the gateway as
// the client's peer. The client's SDP offer (application/sdp, or multipart `sdp` + `session` as the
// SDK sends it) goes through the pipeline like a WebSocket session's upgrade: the caller stages
// identify the key (or a client secret stands for it), the request stages plan the target and admit
// one session start. The execution opens the gateway's own peer to the provider (its offer POSTed
// with the provider key), then answers the client's offer with the gateway's SDP (201 and a
// Location naming the call). Audio RTP is relayed between the legs as it is (both carry Opus) and
// the `oai-events` data channels through the same governed session as a WebSocket's.
// `/realtime/calls/<id>/hangup` ends a call, on whichever replica holds it when they share Redis
// (call-directory.ts); accept, reject and refer are SIP's, refused by name.
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Exchange } from '../http/exchange.ts';
import { readBody, validated } from '../http/body.ts';
import { isFile, isMultipart, readForm } from '../http/multipart.ts';
import { respond, sendError } from '../http/respond.ts';
import type { PatternRoutes, Routes } from '../http/server.ts';
import type { Services } from '../services.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { RequestContext } from '../pipeline/context.ts';
import type { Execute } from '../pipeline/runner.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { pickKey } from '../pipeline/key-pool.ts';
import { identifyCaller } from '../governance/auth.ts';
import { blockedAddress } from '../upstream/egress.ts';
import { GatewayError, requireOperation } from '../unified/errors.ts';
import { OPENAI_PREFIXES } from '../unified/operations.ts';
import { log } from '../log.ts';
import { takeSecret, type SecretGrant } from './client-secret.ts';
import { DEFAULT_MAX_SESSIONS_PER_KEY, type SessionCap } from './session-cap.ts';
import { boundsOf, governSession, SessionRegistry } from './governed.ts';
import { HANGUP_CONFIRM_MS, LOCAL_CALLS, type CallDirectory } from './call-directory.ts';
import type { RealtimeRegistry } from './registry.ts';
import type { RealtimeSession } from './session.ts';
import { answerOpusPayloadType, MAX_SDP_BYTES, readOffer, refusedCandidate, type OfferFacts } from './sdp.ts';
import { answerClient, legsRetired, offerProvider, type Leg, type PeerNetwork } from './webrtc-peer.ts';
import { callRequest, hangupProvider, postOffer, providerModel, type CallRequest } from './webrtc-provider.ts';
import { channelLink, channelPort } from './webrtc-channel.ts';
import { relayMedia } from './webrtc-media.ts';

/** `realtime/calls` below every OpenAI-format prefix. */
export const CALL_PATHS: readonly string[] = OPENAI_PREFIXES.map((p) => `${p}/realtime/calls`);

const REQUEST_TYPE = 'realtime';
/** Signalling with the provider, and both legs' connections, may take this long. */
const CONNECT_TIMEOUT_MS = 10_000;
/** ICE gathering of host candidates only is immediate; this bounds a stuck one. */
const GATHER_TIMEOUT_MS = 5000;
/** How long after its answer is written the client is first checked (sdp.ts splitCandidates says why). */
const ANSWER_HEAD_START_MS = 100;
/** A call's entry in the shared directory outlives its longest session by this much. */
const DIRECTORY_SLACK_MS = 60_000;
/** A form is an SDP offer and the session's settings. */
const MAX_FORM_BYTES = MAX_SDP_BYTES + 64 * 1024;

/** The `session` of a call (OpenAI's RealtimeSessionCreateRequest: `model` names the gateway's `provider/model`). */
export const CallSessionSchema = Type.Object(
  {
    type: Type.Optional(Type.Literal('realtime')),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: true },
);
const readSession = validated(CallSessionSchema);

interface CallInput {
  sdp: string;
  /** The session's settings besides type and model. */
  settings: Record<string, unknown>;
  model: string | undefined;
}

const sdpError = (message: string): GatewayError => new GatewayError(400, message, { param: 'sdp', code: 'invalid_sdp' });

/** The client's request: the offer, and the session settings (multipart) when it sent them. */
async function readCall(ex: Exchange): Promise<CallInput> {
  const type = ex.req.headers['content-type'] ?? '';
  if (isMultipart(ex.req)) {
    const parts = await readForm(ex.req, MAX_FORM_BYTES);
    const text = (name: string): string | undefined => {
      const p = parts.find((x) => x.name === name);
      return p === undefined ? undefined : isFile(p) ? p.data.toString('utf8') : p.value;
    };
    const sdp = text('sdp');
    if (sdp === undefined) throw sdpError('the form has no sdp part: send the SDP offer in a part named sdp');
    const raw = text('session');
    if (raw === undefined) return { sdp, settings: {}, model: undefined };
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new GatewayError(400, 'the session part is not JSON: send the session settings as a JSON object', { param: 'session', code: 'invalid_field' });
    }
    let session;
    try {
      session = readSession(parsed);
    } catch (err) {
      const e = err as GatewayError;
      const field = typeof e.param === 'string' && e.param ? `session.${e.param.replace(/^\//, '').replaceAll('/', '.')}` : 'session';
      throw new GatewayError(400, `${field}: ${e.message}`, { param: field, code: 'invalid_field' });
    }
    const { type: _type, model, ...settings } = session;
    return { sdp, settings, model };
  }
  if (!/^application\/sdp\b/i.test(type)) throw sdpError(`a call's body is the SDP offer as application/sdp, or multipart/form-data with an sdp part (and a session part), not ${type ? `'${type.slice(0, 80)}'` : 'a body without a content type'}`);
  return { sdp: (await readBody(ex.req, MAX_SDP_BYTES)).toString('utf8'), settings: {}, model: undefined };
}

/** The provider's side of a call being set up. */
interface ProviderCall {
  leg: Leg;
  provider: ProviderRuntime;
  request: CallRequest;
  callId: string | undefined;
  payloadType: number;
}

interface Call {
  vkId: string | undefined;
  session?: RealtimeSession;
  /** Ends the call (its session when it runs, else its legs). */
  hangup(): void;
}

export interface CallsFront {
  routes: Routes;
  patterns: PatternRoutes;
  /** Stops taking calls and ends the open ones between turns, all of them by `graceMs`. */
  drain(graceMs: number): Promise<void>;
  readonly size: number;
}

export function callsFront(opts: { services: Services; cap: SessionCap; registry?: RealtimeRegistry; /** Where the replicas find each other's calls (default: this process only). */ directory?: CallDirectory }): CallsFront {
  const { services } = opts;
  const directory = opts.directory ?? LOCAL_CALLS;
  const registry = new SessionRegistry();
  const calls = new Map<string, Call>();
  const extra = { request_type: REQUEST_TYPE };
  /** Ends a call held here for the key that opened it; false when there is none. */
  const hangupHere = (id: string, vkId: string | undefined): boolean => {
    const call = calls.get(id);
    if (!call || call.vkId !== vkId) return false;
    call.hangup();
    return true;
  };
  directory.listen(hangupHere);

  const create = async (ex: Exchange): Promise<void> => {
    if (registry.draining) {
      sendError(ex.res, new GatewayError(503, 'the gateway is shutting down: call again to reach another replica', { type: 'api_error', code: 'gateway_shutdown', retryAfter: 1 }), extra);
      return;
    }
    const headers = { ...ex.req.headers };
    let grant: SecretGrant | undefined;
    try {
      grant = takeSecret(ex.snapshot.governance, headers);
    } catch (err) {
      sendError(ex.res, err, extra);
      return;
    }
    // The call outlives its HTTP exchange: the client leaving before the answer stops it, not after.
    const controller = new AbortController();
    const onGone = (): void => controller.abort();
    ex.abort.signal.addEventListener('abort', onGone, { once: true });
    const ctx = new RequestContext({
      services,
      snapshot: ex.snapshot,
      operation: 'realtime',
      headers,
      query: ex.query,
      signal: controller.signal,
      started: ex.started,
      http: ex,
      access: ex.access,
      requestId: ex.requestId,
      ...(grant && { caller: { principal: grant.vk, admitted: false } }),
    });
    ctx.requestType = REQUEST_TYPE;
    ctx.errorExtra = extra;
    const answered = Promise.withResolvers<void>();
    let didAnswer = false;

    const accept = async (c: RequestContext): Promise<Execute> => {
      const input = await readCall(ex);
      const asked = input.model ?? ex.query().get('model') ?? undefined;
      if (grant && asked !== undefined && asked !== grant.model) throw new GatewayError(403, `the client secret is for model '${grant.model}', not '${asked.slice(0, 200)}'`, { type: 'permission_error', code: 'model_not_allowed', param: 'session.model' });
      const model = grant?.model ?? asked;
      if (!model) throw new GatewayError(400, 'model is required: name it in the session part (session.model) or as ?model=<provider>/<model>', { param: 'session.model', code: 'missing_model' });
      const facts = readOffer(input.sdp);
      c.scope = { kind: 'model', model, fallbacks: undefined, body: { model } };
      c.request = { model };
      c.access.model = model;
      // The secret's settings are the session's; the client's own come under them.
      const settings = { ...input.settings, ...grant?.session };
      return async (run) => {
        const release = opts.cap.acquire(run.vk, run.snapshot.config.websocket?.max_connections_per_user ?? DEFAULT_MAX_SESSIONS_PER_KEY);
        try {
          const net = networkOf(run);
          const up = await connectFirst(run, facts, settings, net);
          let client: { leg: Leg; answer: string; connect(): void };
          try {
            if (controller.signal.aborted) throw new GatewayError(499, 'the client went away before the call was answered', { type: 'client_closed' });
            client = await answerClient(input.sdp, facts, net, GATHER_TIMEOUT_MS);
          } catch (err) {
            up.leg.close();
            if (up.callId) void hangupProvider(up.provider, up.request, up.callId);
            throw err;
          }
          const id = `rtc_bf_${randomBytes(15).toString('hex')}`;
          ex.res.writeHead(201, { 'content-type': 'application/sdp', location: `${ex.path}/${id}`, 'content-length': Buffer.byteLength(client.answer) });
          ex.res.end(client.answer);
          // The client's candidates once it can have read the answer (it is checked from then on).
          const connect = client.connect;
          setTimeout(connect, ANSWER_HEAD_START_MS).unref();
          didAnswer = true;
          ex.abort.signal.removeEventListener('abort', onGone);
          answered.resolve();
          return await runCall(run, id, client.leg, up, facts);
        } finally {
          release();
        }
      };
    };

    void services.pipeline.run(ctx, accept, true).then(
      async (outcome: Outcome) => {
        ex.abort.signal.removeEventListener('abort', onGone);
        if (!didAnswer) await respond(ex.res, outcome.kind === 'error' ? outcome : { kind: 'error', error: new GatewayError(500, 'the call was not answered', { type: 'internal_error' }) });
        answered.resolve();
      },
      (err: unknown) => {
        log.error('realtime call failed', { error: (err as Error)?.stack ?? String(err) });
        if (!didAnswer) sendError(ex.res, err, extra);
        answered.resolve();
      },
    );
    await answered.promise;
  };

  /** The first target whose provider takes the call; a refusal that is the caller's (4xx) is not retried elsewhere. */
  const connectFirst = async (ctx: RequestContext, facts: OfferFacts, settings: Record<string, unknown>, net: PeerNetwork): Promise<ProviderCall> => {
    let last: GatewayError | undefined;
    for (let i = 0; i < ctx.targets.length; i++) {
      const target = ctx.targets[i];
      const provider = target.provider;
      ctx.provider = provider.name;
      ctx.model = target.model;
      ctx.fallbackIndex = i;
      ctx.access.provider = provider.name;
      requireOperation(provider, 'realtime');
      const format = provider.kind.format;
      if (format !== 'openai' && format !== 'azure') {
        // Gemini's Live API takes PCM over its WebSocket; bridging WebRTC's Opus to it means decoding Opus.
        last = new GatewayError(400, `provider '${provider.name}' cannot take a WebRTC call: its realtime API takes PCM audio over a WebSocket, and bridging a call's Opus audio to it would need Opus decoding, which this gateway does not do. Use the WebSocket endpoint: GET /v1/realtime?model=${provider.name}/${target.model}`, { code: 'unsupported_operation', param: 'model', provider: provider.name });
        continue;
      }
      const key = pickKey(target);
      ctx.keyId = key?.id;
      const request = callRequest(provider, key);
      const { leg, offer } = await offerProvider(facts, net, GATHER_TIMEOUT_MS);
      try {
        const session = { ...settings, type: 'realtime', model: providerModel(provider, target.model, key) };
        const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(CONNECT_TIMEOUT_MS)]);
        const { answer, callId } = await postOffer(provider, request, offer, session, signal);
        const refused = provider.allowLinkLocal ? undefined : refusedCandidate(answer, blockedAddress);
        if (refused) {
          if (callId) void hangupProvider(provider, request, callId);
          throw new GatewayError(502, `provider '${provider.name}' answered with a candidate the gateway will not connect to: ${refused} (set network_config.allow_link_local to allow it)`, { type: 'upstream_error', code: 'egress_blocked', provider: provider.name });
        }
        try {
          leg.pc.setRemoteDescription(answer, 'answer');
        } catch (err) {
          if (callId) void hangupProvider(provider, request, callId);
          throw new GatewayError(502, `provider '${provider.name}' answered with an SDP the gateway cannot apply: ${(err as Error).message.slice(0, 300)}`, { type: 'upstream_error', code: 'upstream_invalid_response', provider: provider.name });
        }
        return { leg, provider, request, callId, payloadType: answerOpusPayloadType(answer) ?? facts.audio?.opusPayloadType ?? 111 };
      } catch (err) {
        leg.close();
        if (!(err instanceof GatewayError) || err.status < 500) throw err;
        last = err;
      }
    }
    throw last ?? new GatewayError(502, 'no provider could take the call', { type: 'upstream_error' });
  };

  /** The call from its answer to its end: both channels open, then the governed session. */
  const runCall = async (ctx: RequestContext, id: string, client: Leg, up: ProviderCall, facts: OfferFacts): Promise<Outcome> => {
    const media = relayMedia(client, up.leg, { client: facts.audio?.opusPayloadType ?? 111, provider: up.payloadType }, ctx.services.metrics, ctx.provider);
    const call: Call = {
      vkId: ctx.vk?.record.id,
      hangup: () => {
        if (call.session) call.session.hangup();
        else client.close();
      },
    };
    calls.set(id, call);
    directory.opened(id, call.vkId, boundsOf(ctx.snapshot.config.websocket).maxMs + DIRECTORY_SLACK_MS);
    try {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new GatewayError(408, `the call's WebRTC connection did not open within ${CONNECT_TIMEOUT_MS / 1000} s`, { type: 'request_timeout', code: 'webrtc_connect_timeout' })), CONNECT_TIMEOUT_MS);
      });
      try {
        await Promise.race([Promise.all([client.opened, up.leg.opened]), late]);
      } catch (err) {
        ctx.logMetadata = { transport: 'webrtc', realtime_end: 'connect_failed', ...media.metadata() };
        return { kind: 'error', error: err instanceof GatewayError ? err : new GatewayError(502, String(err), { type: 'upstream_error' }) };
      } finally {
        clearTimeout(timer);
      }
      return await governSession(ctx, registry, channelPort(client), channelLink(up.leg), {
        ...(opts.registry && { listing: opts.registry }),
        transport: 'webrtc',
        started: (session) => {
          call.session = session;
          media.attach(session);
        },
        metadata: () => media.metadata(),
      });
    } finally {
      calls.delete(id);
      directory.closed(id);
      // Retired, not closed: the session's last events (an error event naming why it ended) are
      // still on their way to the peer.
      void client.retire();
      void up.leg.retire();
      if (up.callId) void hangupProvider(up.provider, up.request, up.callId);
    }
  };

  /**
   * `.../realtime/calls/<id>/<action>`: hangup ends the caller's own call, here or on the replica
   * holding it; the SIP actions are refused by name.
   */
  const action = async (ex: Exchange): Promise<void> => {
    const [id = '', verb = ''] = ex.params.slice(-2);
    try {
      if (verb !== 'hangup') {
        throw new GatewayError(400, `${verb} is for incoming SIP calls, which this gateway does not take: it answers WebRTC calls (POST /v1/realtime/calls), which end with POST /v1/realtime/calls/<call_id>/hangup`, { code: 'unsupported_operation', param: 'call_id' });
      }
      const headers = { ...ex.req.headers };
      const vkId = (takeSecret(ex.snapshot.governance, headers)?.vk ?? identifyCaller(ex.snapshot.governance, headers))?.record.id;
      if (!hangupHere(id, vkId)) await hangupElsewhere(id, vkId);
      ex.res.writeHead(200, { 'content-length': 0 });
      ex.res.end();
    } catch (err) {
      sendError(ex.res, err, extra);
    }
  };

  /** A call not held here: the replica holding it is told (a shared Redis), else it is unknown. */
  const hangupElsewhere = async (id: string, vkId: string | undefined): Promise<void> => {
    const name = id.slice(0, 100);
    let remote;
    try {
      remote = await directory.hangupElsewhere(id, vkId);
    } catch (err) {
      throw new GatewayError(503, `call '${name}' is not held by this replica, and the replicas' shared Redis did not answer to reach the one that holds it: ${(err as Error).message}`, { type: 'api_error', code: 'call_directory_unavailable', param: 'call_id', retryAfter: 1 });
    }
    // Another key's call is as unknown as one that never was.
    if (remote.kind === 'unknown') throw new GatewayError(404, `no call '${name}' is open ${directory.shared ? 'on any replica' : 'on this gateway'} for this key`, { type: 'invalid_request_error', code: 'call_not_found', param: 'call_id' });
    if (remote.kind === 'unconfirmed') {
      throw new GatewayError(409, `call '${name}' is held by replica '${remote.holder}', which did not confirm the hangup within ${HANGUP_CONFIRM_MS / 1000} s (it may have stopped, and its calls with it); send the hangup again, or to that replica`, { type: 'invalid_request_error', code: 'call_held_elsewhere', param: 'call_id' });
    }
  };

  const routes: Routes = Object.fromEntries(CALL_PATHS.map((p) => [p, { POST: create }]));
  const patterns: PatternRoutes = CALL_PATHS.map((p) => [new RegExp(`^${p.replaceAll('/', '\\/')}\\/([A-Za-z0-9_-]{1,128})\\/(hangup|accept|reject|refer)$`), { POST: action }]);
  return {
    routes,
    patterns,
    drain: async (graceMs) => {
      await registry.drain(graceMs);
      await legsRetired();
    },
    get size() {
      return calls.size;
    },
  };
}

function networkOf(ctx: RequestContext): PeerNetwork {
  const cfg = ctx.snapshot.config.websocket?.webrtc;
  return { ...(cfg?.bind_address && { bindAddress: cfg.bind_address }), ...(cfg?.port_range_begin && { portRangeBegin: cfg.port_range_begin }), ...(cfg?.port_range_end && { portRangeEnd: cfg.port_range_end }) };
}
