// The encode queue implementations: priorities, outputs, failures and restart behaviour; pg-boss on the local PostgreSQL.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../kernel/core/logger.js';
import { openStore, type Store } from '../../../kernel/store/database.js';
import { DatabaseEncodeQueue } from '../../../vod-encoder/queue-db.js';
import { PgBossEncodeQueue } from '../../../vod-encoder/queue-pgboss.js';
import type { EncodeQueue } from '../../../vod-encoder/queue.js';
import { POSTGRES_URL, postgresAvailable } from '../../helpers/engine.js';

const logger = createLogger('silent');
const stores: Store[] = [];
afterAll(async () => { for (const s of stores) await s.close(); });

/** Enqueues before start so priority decides the order; one slot per kind. */
async function priorityOrder(queue: EncodeQueue): Promise<string[]> {
  const order: string[] = [];
  const handler = async (payload: Record<string, unknown>) => { order.push(String(payload.name)); return { echoed: payload.name }; };
  queue.handle('encode', handler, 1);
  queue.handle('creative', handler, 1);
  const a = await queue.enqueue('encode', { name: 'encode-low' }, { priority: 0 });
  await queue.enqueue('encode', { name: 'encode-high' }, { priority: 10 });
  const c = await queue.enqueue('creative', { name: 'creative' });
  await queue.start();
  const first = await queue.waitFor(a, 30_000);
  expect(first).toMatchObject({ state: 'done', output: { echoed: 'encode-low' } });
  expect((await queue.waitFor(c, 30_000)).output).toEqual({ echoed: 'creative' });
  return order.filter((n) => n.startsWith('encode'));
}

describe('database queue', () => {
  it('runs higher priority first and keeps outputs and failures', async () => {
    const store = await openStore({ dataDir: mkdtempSync(path.join(os.tmpdir(), 'queue-')) });
    stores.push(store);
    const queue = new DatabaseEncodeQueue({ db: store.db, logger, pollMs: 100 });
    expect(await priorityOrder(queue)).toEqual(['encode-high', 'encode-low']);
    queue.handle('captions', async () => { throw new Error('boom'); });
    await queue.close();
    const again = new DatabaseEncodeQueue({ db: store.db, logger, pollMs: 100 });
    again.handle('captions', async () => { throw new Error('boom'); });
    await again.start();
    const id = await again.enqueue('captions', {});
    expect(await again.waitFor(id, 10_000)).toMatchObject({ state: 'failed', error: 'boom' });
    await again.close();
  });

  it('leaves a job interrupted by close running, and runs it again at the next start', async () => {
    const store = await openStore({ dataDir: mkdtempSync(path.join(os.tmpdir(), 'queue-')) });
    stores.push(store);
    const first = new DatabaseEncodeQueue({ db: store.db, logger, pollMs: 100 });
    let started!: () => void;
    const running = new Promise<void>((r) => { started = r; });
    first.handle('encode', (_p, job) => new Promise((_resolve, reject) => {
      started();
      job.signal.addEventListener('abort', () => reject(new Error('aborted')));
    }));
    const id = await first.enqueue('encode', { n: 1 });
    await first.start();
    await running;
    await first.close();
    expect((await first.get(id))?.state).toBe('running');
    const second = new DatabaseEncodeQueue({ db: store.db, logger, pollMs: 100 });
    second.handle('encode', async (p) => ({ again: p.n }));
    await second.start();
    expect(await second.waitFor(id, 10_000)).toMatchObject({ state: 'done', output: { again: 1 } });
    await second.close();
  });
});

describe('pg-boss queue (PostgreSQL)', () => {
  it('runs jobs by priority with outputs, in a fresh schema', async (ctx) => {
    if (!(await postgresAvailable())) {
      ctx.skip(`PostgreSQL at ${POSTGRES_URL} does not answer; the pg-boss queue is not tested`);
      return;
    }
    const schema = `boss_${randomBytes(5).toString('hex')}`;
    const queue = new PgBossEncodeQueue({ connectionString: POSTGRES_URL, schema, logger });
    try {
      expect(await priorityOrder(queue)).toEqual(['encode-high', 'encode-low']);
    } finally {
      await queue.close();
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  }, 60_000);

  it('runs the VOD encode through pg-boss when the engine runs on PostgreSQL', async (ctx) => {
    if (!(await postgresAvailable())) {
      ctx.skip(`PostgreSQL at ${POSTGRES_URL} does not answer; the engine on pg-boss is not tested`);
      return;
    }
    const { startTestEngine } = await import('../../helpers/engine.js');
    const { generateMedia } = await import('../../../fixtures/generate-media.js');
    const { apiKey, createMeta, uploadPlain, waitForStatus } = await import('./helpers.js');
    const engine = await startTestEngine({ dialect: 'postgres' });
    try {
      expect(engine.ctx.services.encodeQueue?.backend).toBe('pg-boss');
      const key = await apiKey(engine);
      const clip = await generateMedia('clip', path.join(engine.dataDir, 'clip.mp4'), { seconds: 2, size: '320x180' });
      const guid = await createMeta(engine, key);
      expect((await uploadPlain(engine, key, guid, clip)).status).toBe(200);
      const done = await waitForStatus(engine, guid, ['complete', 'error'], 60_000);
      expect(done.status, done.statusReason).toBe('complete');
    } finally {
      await engine.close();
    }
  }, 90_000);
});
