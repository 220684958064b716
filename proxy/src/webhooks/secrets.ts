// Generated signing secrets, kept in the logs store's database (webhook_secrets) so every replica
// signs with the same one and a rotation is seen by all of them on their next delivery. Sealed with
// the configuration's encryption_key when there is one. Endpoints whose secret comes from the
// configuration (config.json, env.VAR, a Kubernetes Secret) never have a row here.
import type { SqlDriver } from '../logs/driver.ts';
import { generateSecret, seal, unseal } from './crypto.ts';

export class SecretStore {
  readonly #db: SqlDriver;
  constructor(db: SqlDriver) {
    this.#db = db;
  }

  /** The stored secret of `name`, decrypted; undefined when none is stored. */
  async get(name: string, passphrase: string | undefined): Promise<string | undefined> {
    const rows = await this.#db.query('SELECT secret FROM webhook_secrets WHERE name = ?', [name]);
    const v = rows[0]?.secret;
    return typeof v === 'string' ? unseal(v, passphrase) : undefined;
  }

  /** The stored secret, generating one the first time (a config.json endpoint without `secret`). */
  async ensure(name: string, passphrase: string | undefined): Promise<string> {
    const existing = await this.get(name, passphrase);
    if (existing) return existing;
    // Two replicas may race here: the insert that loses is skipped and both read the winner.
    await this.#db.execute('INSERT INTO webhook_secrets (name, secret, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', [name, seal(generateSecret(), passphrase), Date.now()]);
    return (await this.get(name, passphrase))!;
  }

  /** Stores a new secret (create, rotate) and returns it: the only moment it is ever shown. */
  async replace(name: string, passphrase: string | undefined): Promise<string> {
    const secret = generateSecret();
    await this.#db.execute(
      'INSERT INTO webhook_secrets (name, secret, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET secret = excluded.secret, updated_at = excluded.updated_at',
      [name, seal(secret, passphrase), Date.now()],
    );
    return secret;
  }

  async delete(name: string): Promise<void> {
    await this.#db.execute('DELETE FROM webhook_secrets WHERE name = ?', [name]);
  }
}
