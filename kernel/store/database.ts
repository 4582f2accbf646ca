// Kysely over SQLite (embedded default) or PostgreSQL (scale-out), chosen by DATABASE_URL.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { migrations } from './migrations/index.js';

/**
 * The tables of every resource. Each resource module adds its own tables by module augmentation:
 * `declare module './database.js' { interface Tables { users: UserTable } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Tables {}

export type Db = Kysely<Tables>;
export type Tx = Transaction<Tables>;
export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Db;
  dialect: Dialect;
  /** true when the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** postgres://… or undefined for SQLite */
  databaseUrl?: string | undefined;
  /** directory of the SQLite file */
  dataDir: string;
  /** PostgreSQL schema to use (tests isolate themselves with one schema each). */
  schema?: string;
  /** where a connection lost in the background is reported (it is replaced on the next query) */
  onConnectionError?: (error: Error) => void;
}

/**
 * Bounds of a PostgreSQL outage as the API sees it (issue 27): a connection is waited for at most this long, and a
 * query on a connection that went silent fails after QUERY_TIMEOUT_MS, so a request answers 503 instead of hanging.
 */
export const CONNECT_TIMEOUT_MS = 3_000;
export const QUERY_TIMEOUT_MS = 30_000;

// BIGINT (epoch ms) comes back from pg as a string by default; our values fit in a double.
pg.types.setTypeParser(20, (value) => Number(value));

export async function openStore(options: StoreOptions): Promise<Store> {
  let store: Store;
  if (options.databaseUrl) {
    const schema = options.schema;
    if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`bad schema name ${schema}`);
    if (schema) {
      const admin = new pg.Client({ connectionString: options.databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      admin.on('error', (error) => options.onConnectionError?.(error));
      await admin.connect();
      try {
        await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      } finally {
        await admin.end();
      }
    }
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      // a peer gone without a word (a failover, a cut network) is noticed by the kernel instead of never
      keepAlive: true,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    // A connection that dies (PostgreSQL restarted: 57P01) emits 'error': on an idle client through the pool, on one a
    // transaction holds through the client. Unheard, either ends the process (issue 27); heard, the dead client leaves
    // the pool and the next query opens a fresh one.
    const onError = (error: Error) => options.onConnectionError?.(error);
    pool.on('error', onError);
    pool.on('connect', (client) => client.on('error', onError));
    const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
    store = {
      db,
      dialect: 'postgres',
      ping: () => pingDb(db),
      close: () => db.destroy(),
    };
  } else {
    fs.mkdirSync(options.dataDir, { recursive: true });
    const file = new BetterSqlite3(path.join(options.dataDir, 'engine.sqlite'));
    file.pragma('journal_mode = WAL');
    file.pragma('foreign_keys = ON');
    file.pragma('busy_timeout = 5000');
    const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: file }) });
    store = { db, dialect: 'sqlite', ping: () => pingDb(db), close: () => db.destroy() };
  }
  await migrate(store.db, store.dialect === 'postgres' ? await currentSchema(store.db) : undefined);
  return store;
}

async function pingDb(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

// Kysely looks for its migration tables in every schema; naming ours keeps schemas apart.
async function currentSchema(db: Db): Promise<string> {
  const result = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return result.rows[0]?.schema ?? 'public';
}

async function migrate(db: Db, migrationTableSchema: string | undefined): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  // Kysely's migrator looks for its table by listing the tables of every schema of the database; another engine
  // dropping its own schema at that moment fails the listing with 3F000 (invalid schema name). That is a race in
  // the catalog read, not a fault of ours: read again.
  for (let attempt = 1; ; attempt++) {
    const { error } = await migrator.migrateToLatest();
    if (!error) return;
    const foreignSchemaVanished = (error as { code?: string }).code === '3F000' && !(migrationTableSchema && String((error as Error).message).includes(`"${migrationTableSchema}"`));
    if (foreignSchemaVanished && attempt < 5) continue;
    throw error instanceof Error ? error : new Error(`migration failed: ${String(error)}`);
  }
}

/** Parses a JSON column; the store writes JSON text so both dialects share one column type. */
export function fromJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  return JSON.parse(text) as T;
}

export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}
