// What the log store needs from a SQL database; one implementation per engine (sqlite-store.ts,
// postgres-store.ts) so the queries in sql-store.ts are written once and behave the same on both.
export type Row = Record<string, unknown>;

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** Case-insensitive LIKE. */
  readonly ilike: string;
  /** 64-bit float column type. */
  readonly double: string;
}

/** One versioned schema step (the list is in migrations.ts); here because `migrate` takes it. */
export interface Migration {
  version: number;
  description: string;
  statements(d: Dialect): string[];
}

export interface RowsToInsert {
  table: string;
  columns: readonly string[];
  /** Column types as PostgreSQL names them (text, bigint, integer, double precision). */
  types: readonly string[];
  rows: unknown[][];
  /**
   * SQLite only: statements run in the same transaction after the rows, each bound to the batch's
   * rowid range (after, upTo] (the roll-ups). PostgreSQL's statement triggers do this there.
   */
  afterRange?: readonly string[];
}

export interface QueryOptions {
  /**
   * On the request path (an async submit or fetch): a server store gives up after the store
   * deadline (SKYBRIDGE_STORE_TIMEOUT_MS) rather than the statement timeout.
   */
  fast?: boolean;
}

export interface SqlDriver {
  readonly dialect: Dialect;
  /** Runs a read; `?` placeholders, values bound as parameters. */
  query(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<Row[]>;
  /** Runs a write; resolves with the number of rows changed. */
  execute(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<number>;
  /** Inserts all rows in one transaction; a row whose primary key exists is skipped. */
  insert(batches: readonly RowsToInsert[]): Promise<void>;
  /** Applies the migrations not applied yet, in order; concurrent openers of one database take turns. */
  migrate(migrations: readonly Migration[]): Promise<number[]>;
  close(): Promise<void>;
  /** Why the database does not answer right now (a server that missed its deadline), if it does not. */
  unavailable?(): string | undefined;
}
