// One warning per outage instead of one per failed retry: during an API-server outage every watch
// restarts with its own backoff, and logging each restart wrote up to 32 lines a second. The first
// failure is a warning, later ones go to debug, and the first success after them says, once, how
// long it lasted and how many failures it took.
import { log } from '../../proxy/src/contract.ts';

type Logger = Pick<typeof log, 'warn' | 'info' | 'debug'>;

export class OutageLog {
  readonly #what: string;
  readonly #logger: Logger;
  readonly #now: () => number;
  #failures = 0;
  #since = 0;

  constructor(what: string, logger: Logger = log, now: () => number = Date.now) {
    this.#what = what;
    this.#logger = logger;
    this.#now = now;
  }

  failed(fields: Record<string, unknown>): void {
    if (this.#failures++ === 0) {
      this.#since = this.#now();
      this.#logger.warn(this.#what, { ...fields, note: 'further failures are logged at debug level until it recovers' });
    } else {
      this.#logger.debug(this.#what, fields);
    }
  }

  recovered(): void {
    if (this.#failures === 0) return;
    this.#logger.info(`${this.#what}: recovered`, { failures: this.#failures, outage_ms: this.#now() - this.#since });
    this.#failures = 0;
  }
}
