// undici's own body Readable (what its request() gives as `body`), for answers made through dispatch().
declare module 'undici/lib/api/readable.js' {
  import type { Dispatcher } from 'undici';

  interface BodyReadableOptions {
    resume: () => void;
    abort: (reason: Error) => void;
    contentType?: string | string[];
    contentLength?: number | null;
    highWaterMark?: number;
  }
  const readable: { Readable: new (opts: BodyReadableOptions) => Dispatcher.ResponseData['body'] };
  export default readable;
}
