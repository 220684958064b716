// Gateway errors in Bedrock Runtime's shape, for clients of /bedrock: `{"message": ...}` with the
// exception name in the `x-amzn-errortype` header, from which the AWS SDK picks its exception
// class (ThrottlingException, ValidationException, ...). Mid-stream failures become exception
// frames naming the stream union's member instead.
import type { GatewayError } from '../../../unified/errors.ts';

export interface BedrockErrorResponse {
  status: number;
  body: { message: string };
  headers: Record<string, string>;
}

/** Exception name for an HTTP status, from the Bedrock Runtime API reference. */
export function bedrockExceptionName(status: number): string {
  switch (status) {
    case 401:
    case 403:
      return 'AccessDeniedException';
    case 404:
      return 'ResourceNotFoundException';
    case 408:
    case 504:
      return 'ModelTimeoutException';
    case 424:
      return 'ModelErrorException';
    case 429:
      return 'ThrottlingException';
    case 503:
      return 'ServiceUnavailableException';
    default:
      return status >= 500 ? 'InternalServerException' : 'ValidationException';
  }
}

export function toBedrockError(err: GatewayError, requestId?: string): BedrockErrorResponse {
  const status = Number.isInteger(err.status) && err.status >= 400 && err.status <= 599 ? err.status : 500;
  const name = bedrockExceptionName(status);
  return {
    status,
    body: { message: err.message },
    // AWS names the request in a header only (the SDK's $metadata.requestId): its error body is `message` alone.
    headers: { 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`, ...(requestId !== undefined && { 'x-amzn-requestid': requestId }) },
  };
}

/**
 * The stream union member for a failure after the 200. ConverseStream knows internalServer,
 * modelStreamError, validation, throttling and serviceUnavailable; InvokeModelWithResponseStream
 * also modelTimeout. A broken upstream (502) is a model stream error, which AWS says to retry.
 */
export function streamExceptionType(err: GatewayError, withTimeout: boolean): string {
  const s = err.status;
  if (s === 429) return 'throttlingException';
  if (s === 503) return 'serviceUnavailableException';
  if ((s === 408 || s === 504) && withTimeout) return 'modelTimeoutException';
  if (s >= 400 && s < 500 && s !== 408) return 'validationException';
  if (s === 500) return 'internalServerException';
  return 'modelStreamErrorException';
}
