// The gateway's HTTP/1.1 answer: node's ServerResponse carrying the request's id, which its
// writeHead puts in the head it is given. The id set earlier with setHeader instead would make every
// writeHead take node's merge path (each header given validated, lower-cased and stored again
// through setHeader); passed with writeHead's own headers, a head with no other setHeader goes out
// as given. One place for every writer of an answer (JSON, text, streams, bytes, errors, the
// implicit head of write/end), so none can forget the id.
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { REQUEST_ID_HEADER } from '../request-id.ts';

type Head = OutgoingHttpHeaders | OutgoingHttpHeader[];

export class AnswerResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** The `x-request-id` this answer's head carries (unless one was set with setHeader, which wins as before). */
  requestId: string | undefined = undefined;

  override writeHead(statusCode: number, statusMessage?: string, headers?: Head): this;
  override writeHead(statusCode: number, headers?: Head): this;
  override writeHead(statusCode: number, reason?: string | Head, headers?: Head): this {
    const id = this.requestId;
    let message: string | undefined;
    if (typeof reason === 'string') message = reason;
    else headers = reason;
    if (id === undefined || this.hasHeader(REQUEST_ID_HEADER)) return super.writeHead(statusCode, message, headers);
    // The given headers after the id: one of them named x-request-id wins, as it did over setHeader.
    if (!Array.isArray(headers)) return super.writeHead(statusCode, message, { [REQUEST_ID_HEADER]: id, ...headers });
    // A list of name/value pairs (no writer of the gateway's): the id through setHeader, as before.
    this.setHeader(REQUEST_ID_HEADER, id);
    return super.writeHead(statusCode, message, headers);
  }

  /**
   * A whole answer's head with its content type and length, then `headers`: the id put first in the
   * same object, not a copy of a head already built (writeHead's spread). The same names, order and
   * values as writeHead given that head.
   */
  writeContentHead(statusCode: number, contentType: string, length: number, headers?: OutgoingHttpHeaders): this {
    const id = this.requestId;
    if (id === undefined || this.hasHeader(REQUEST_ID_HEADER)) return super.writeHead(statusCode, { 'content-type': contentType, 'content-length': length, ...headers });
    return super.writeHead(statusCode, { [REQUEST_ID_HEADER]: id, 'content-type': contentType, 'content-length': length, ...headers });
  }
}

/** A whole answer's head (see AnswerResponse.writeContentHead); any other response (HTTP/2, the management API) through its writeHead. */
export function writeContentHead(res: ServerResponse, statusCode: number, contentType: string, length: number, headers?: OutgoingHttpHeaders): void {
  if (res instanceof AnswerResponse) res.writeContentHead(statusCode, contentType, length, headers);
  else res.writeHead(statusCode, { 'content-type': contentType, 'content-length': length, ...headers });
}

/** The request id an answer carries or will carry: set with setHeader (HTTP/2, the management API), else the one its head will get. */
export function answerRequestId(res: ServerResponse): string | undefined {
  const header = res.getHeader(REQUEST_ID_HEADER);
  if (typeof header === 'string') return header;
  return res instanceof AnswerResponse ? res.requestId : undefined;
}
