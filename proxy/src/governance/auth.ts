// Who is calling an inference endpoint: the virtual key from `x-bf-vk`, or from `Authorization:
// Bearer` / `x-api-key` when the value is a virtual key (SDKs always send some key there, often a
// placeholder, so an unknown value in those headers is not an error unless auth is enforced).
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../unified/errors.ts';
import { findVirtualKey, type GovernanceRuntime, type VirtualKeyRuntime } from '../config/governance-runtime.ts';
import { BF_HEADERS } from '../bf-headers.ts';

/** The reference gateway's generated virtual keys start with this. */
const VK_PREFIX = 'sk-bf-';

const unauthorized = (message: string) => new GatewayError(401, message, { type: 'authentication_error', code: 'invalid_virtual_key' });

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.authorization;
  return h && /^bearer /i.test(h) ? h.slice(7).trim() : undefined;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function identifyCaller(rt: GovernanceRuntime, headers: IncomingHttpHeaders): VirtualKeyRuntime | undefined {
  const explicit = header(headers, BF_HEADERS.virtualKey.name);
  if (explicit !== undefined) return active(findVirtualKey(rt, explicit), 'the virtual key in x-bf-vk is not valid');
  for (const candidate of [bearer(headers), header(headers, 'x-api-key'), header(headers, 'x-goog-api-key')]) {
    if (!candidate) continue;
    const vk = findVirtualKey(rt, candidate);
    if (vk) return active(vk, '');
    if (candidate.startsWith(VK_PREFIX)) throw unauthorized('the virtual key presented is not valid');
  }
  if (rt.enforceAuth) throw unauthorized('a virtual key is required: send it in x-bf-vk (or as a Bearer token)');
  return undefined;
}

function active(vk: VirtualKeyRuntime | undefined, unknownMessage: string): VirtualKeyRuntime {
  if (!vk) throw unauthorized(unknownMessage);
  if (vk.record.is_active === false) throw unauthorized(`virtual key '${vk.record.name}' is inactive`);
  return vk;
}
