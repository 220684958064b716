// apiextensions.k8s.io/v1 ConversionReview: the API server's request -> our answer. Pure. One object
// that cannot be converted fails the whole review (the API server wants all or nothing), and the
// message names the object and the field, since it is what the user sees from kubectl.
import { ConversionError, convertObject, versionOf } from './convert.ts';
import { GROUP, VERSIONS } from '../resources/kinds.ts';

export const REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';

export interface ConversionReviewResponse {
  apiVersion: typeof REVIEW_API_VERSION;
  kind: 'ConversionReview';
  response: {
    uid: string;
    convertedObjects?: unknown[];
    result: { status: 'Success' } | { status: 'Failure'; message: string };
  };
}

/** Not a ConversionReview we can answer at all (no uid to answer to): the HTTP layer says 400. */
export class BadReview extends Error {}

export function review(body: unknown): ConversionReviewResponse {
  if (!isObject(body)) throw new BadReview('the body must be a JSON object (a ConversionReview)');
  if (body.apiVersion !== REVIEW_API_VERSION || body.kind !== 'ConversionReview') {
    throw new BadReview(`apiVersion/kind must be ${REVIEW_API_VERSION} ConversionReview, got ${JSON.stringify(body.apiVersion)} ${JSON.stringify(body.kind)}`);
  }
  const request = body.request;
  if (!isObject(request) || typeof request.uid !== 'string' || !request.uid) throw new BadReview('request.uid: required');
  const answer = (result: ConversionReviewResponse['response']['result'], convertedObjects?: unknown[]): ConversionReviewResponse => ({
    apiVersion: REVIEW_API_VERSION,
    kind: 'ConversionReview',
    response: { uid: request.uid as string, ...(convertedObjects ? { convertedObjects } : {}), result },
  });
  const to = versionOf(request.desiredAPIVersion);
  if (!to) {
    return answer({ status: 'Failure', message: `request.desiredAPIVersion: must be ${VERSIONS.map((v) => `${GROUP}/${v}`).join(' or ')}, got ${JSON.stringify(request.desiredAPIVersion)}` });
  }
  if (!Array.isArray(request.objects)) return answer({ status: 'Failure', message: 'request.objects: must be a list' });
  const converted: unknown[] = [];
  for (const [i, obj] of request.objects.entries()) {
    try {
      converted.push(convertObject(obj, to));
    } catch (err) {
      if (!(err instanceof ConversionError)) throw err;
      return answer({ status: 'Failure', message: `cannot convert ${objectName(obj, i)} to ${GROUP}/${to}: ${err.message}` });
    }
  }
  return answer({ status: 'Success' }, converted);
}

/** `VirtualKey team-a/checkout (gateway.skybridge.dev/v1alpha1)`, or `objects[3]` when it has no name. */
function objectName(obj: unknown, i: number): string {
  if (!isObject(obj) || !isObject(obj.metadata) || typeof obj.metadata.name !== 'string') return `request.objects[${i}]`;
  const ns = typeof obj.metadata.namespace === 'string' ? `${obj.metadata.namespace}/` : '';
  return `${String(obj.kind)} ${ns}${obj.metadata.name} (${String(obj.apiVersion)})`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
