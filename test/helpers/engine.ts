// Starts a real engine on an ephemeral port with a fresh store: SQLite in a temp dir, or a fresh
// PostgreSQL schema when the test asks for PostgreSQL.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEngine, type EngineOptions, type RunningEngine } from '../../wiring/engine.js';
import { createLogger } from '../../kernel/core/logger.js';

export const ADMIN_EMAIL = 'admin@example.test';
export const ADMIN_PASSWORD = 'correct-horse-battery';
export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type DialectChoice = 'sqlite' | 'postgres';

let postgresAnswer: Promise<boolean> | undefined;
/** true when the local PostgreSQL answers; tests on it skip with a message otherwise. */
export function postgresAvailable(): Promise<boolean> {
  postgresAnswer ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      process.stderr.write(`PostgreSQL at ${POSTGRES_URL} does not answer: PostgreSQL variants of the tests are skipped\n`);
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return postgresAnswer;
}

/** Drops a test's own PostgreSQL schema (and everything in it) at its end. */
export async function dropPostgresSchema(schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await admin.end();
  }
}

export interface TestEngine extends RunningEngine {
  dataDir: string;
  /** fetch against the engine with JSON helpers */
  api(method: string, url: string, init?: { body?: unknown; headers?: Record<string, string>; raw?: string }): Promise<{ status: number; body: any; headers: Headers }>;
  login(email?: string, password?: string): Promise<{ IdToken: string; RefreshToken: string; AccessToken: string }>;
}

export async function startTestEngine(
  options: { dialect?: DialectChoice; env?: Record<string, string>; dataDir?: string; schema?: string } & Omit<EngineOptions, 'env'> = {},
): Promise<TestEngine> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'engine-test-'));
  const env: Record<string, string | undefined> = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ENGINE_ADMIN_EMAIL: ADMIN_EMAIL,
    ENGINE_ADMIN_PASSWORD: ADMIN_PASSWORD,
    LOG_LEVEL: 'silent',
    // the RTMP ingest server binds on the first RTMP_PUSH start; never the shared 1935 in tests
    RTMP_PORT: '0',
    PATH: process.env.PATH,
    ...options.env,
  };
  let schema = options.schema;
  if (options.dialect === 'postgres') {
    env.DATABASE_URL = POSTGRES_URL;
    schema ??= `t_${randomBytes(6).toString('hex')}`;
  }
  const engine = await startEngine({
    ...options,
    env,
    logger: options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    ...(schema ? { databaseSchema: schema } : {}),
  });
  const api: TestEngine['api'] = async (method, url, init = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    let body: string | undefined = init.raw;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    } else if (init.raw !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${engine.url}${url}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  const login: TestEngine['login'] = async (email = ADMIN_EMAIL, password = ADMIN_PASSWORD) => {
    const answer = await api('POST', '/auth/authorize', { body: { email, password } });
    if (answer.status !== 200) throw new Error(`login failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.data;
  };
  return Object.assign(engine, { dataDir, api, login });
}

/** The dialects a store test runs on: SQLite always, PostgreSQL where the local server answers. */
export const DIALECTS: DialectChoice[] = ['sqlite', 'postgres'];
