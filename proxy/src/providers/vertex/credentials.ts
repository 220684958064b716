// A Google service-account key file (`auth_credentials`), parsed and checked once per distinct text.
import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';

export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

export interface ServiceAccount {
  /** Digest of the key file: identifies the account's token cache entry without holding the text. */
  id: string;
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId: string | undefined;
  /** Where the signed assertion is exchanged; Google's endpoint unless the key file names another. */
  tokenUri: string;
}

const parsed = new Map<string, ServiceAccount>();

/** Throws an Error whose message says what is wrong with the key file (never echoing the key). */
export function serviceAccount(text: string): ServiceAccount {
  const cached = parsed.get(text);
  if (cached) return cached;
  const account = parseServiceAccount(text);
  parsed.set(text, account);
  return account;
}

function parseServiceAccount(text: string): ServiceAccount {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('is not a service-account key file (not valid JSON)');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('is not a service-account key file (not a JSON object)');
  const file = json as Record<string, unknown>;
  if (file.type !== 'service_account') {
    throw new Error(`has type ${JSON.stringify(file.type ?? null)}; only 'service_account' key files are supported`);
  }
  const str = (name: string): string | undefined => (typeof file[name] === 'string' && file[name] ? (file[name] as string) : undefined);
  const clientEmail = str('client_email');
  const pem = str('private_key');
  if (!clientEmail) throw new Error('has no client_email');
  if (!pem) throw new Error('has no private_key');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new Error('has a private_key that is not a valid PEM private key');
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw new Error('has a private_key that is not an RSA key');
  const tokenUri = str('token_uri') ?? GOOGLE_TOKEN_URI;
  try {
    const u = new URL(tokenUri);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
  } catch {
    throw new Error('has a token_uri that is not an http(s) URL');
  }
  return {
    id: createHash('sha256').update(text).digest('hex').slice(0, 32),
    clientEmail,
    privateKey,
    privateKeyId: str('private_key_id'),
    tokenUri,
  };
}
