// An api engine (no packager role) killed while packager processes start its channels, and started again: a start
// that a live packager still runs is waited for again and ends RUNNING with its endpoints, or START_FAILED with the
// packager's reason; one whose packager is gone too fails as "the engine restarted". The api that dies is a real
// `engine start` process killed with SIGKILL; the packagers are command workers in this process over their own
// stores, whose runtime holds each start until the test answers it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../kernel/core/clock.js';
import { createLogger } from '../../../kernel/core/logger.js';
import { openStore, type Store } from '../../../kernel/store/database.js';
import { ChannelCommandWorker } from '../../../packager/channel-command-worker.js';
import { channelCommandQueue } from '../../../src/channels/channel-command.store.js';
import type { AdBreak, ChannelEndpoints, ChannelRuntime, ChannelSpec } from '../../../kernel/seams/channel-runtime.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, DIALECTS, dropPostgresSchema, POSTGRES_URL, postgresAvailable, startTestEngine, type DialectChoice, type TestEngine } from '../../helpers/engine.js';
import { startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';
import { catalogBlueprint } from './live-helpers.js';

const logger = createLogger('silent');

/** A packager's runtime whose starts wait until the test answers them, by workflow id. */
class AnsweredStarts implements ChannelRuntime {
  readonly calls: string[] = [];
  private readonly waiting = new Map<string, { resolve(endpoints: ChannelEndpoints): void; reject(error: Error): void }>();

  start(spec: ChannelSpec): Promise<ChannelEndpoints> {
    this.calls.push(`start ${spec.workflowId}`);
    return new Promise((resolve, reject) => this.waiting.set(spec.workflowId, { resolve, reject }));
  }
  succeed(workflowId: string): void {
    this.waiting.get(workflowId)?.resolve({
      inputs: [{ name: 'main', type: 'SRT_PUSH', url: `srt://packager.local:9000?streamid=${workflowId}` }],
      outputs: [{ destinationId: 'hls-origin', type: 'HLS', url: `http://packager.local/live/${workflowId}/index.m3u8` }],
    });
  }
  fail(workflowId: string, reason: string): void {
    this.waiting.get(workflowId)?.reject(new Error(reason));
  }
  answerAll(): void {
    for (const workflowId of this.waiting.keys()) this.fail(workflowId, 'the test ended');
  }
  async stop(workflowId: string): Promise<{ archiveUrl?: string }> {
    this.calls.push(`stop ${workflowId}`);
    return {};
  }
  async insertAdBreak(_workflowId: string, _adBreak: AdBreak): Promise<void> {}
  async switchInput(_workflowId: string, _input: string): Promise<void> {}
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.each(DIALECTS)('an api engine restarted while packagers start its channels, on %s', (dialect: DialectChoice) => {
  let unavailable = false;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'api-restart-'));
  const schema = `t_restart_${randomBytes(5).toString('hex')}`;
  const stores: Store[] = [];
  const workers: ChannelCommandWorker[] = [];
  const runtimes: AnsweredStarts[] = [];
  let crashed: EngineProcess | undefined;
  let restarted: TestEngine | undefined;

  beforeAll(async () => {
    unavailable = dialect === 'postgres' && !(await postgresAvailable());
  });
  afterAll(async () => {
    for (const runtime of runtimes) runtime.answerAll();
    for (const worker of workers) {
      await worker.settled();
      await worker.close();
    }
    await restarted?.close();
    await crashed?.kill();
    for (const store of stores) await store.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (dialect !== 'postgres' || unavailable) return;
    await dropPostgresSchema(schema);
  });
  beforeEach(({ skip }) => {
    if (unavailable) skip();
  });

  /** A packager process: its own store on the shared database; `pollMs` long: it claims only when told to (poll()). */
  const packager = async (id: string, pollMs: number) => {
    const store = await openStore(dialect === 'postgres' ? { databaseUrl: POSTGRES_URL, dataDir, schema } : { dataDir });
    stores.push(store);
    const runtime = new AnsweredStarts();
    runtimes.push(runtime);
    const worker = new ChannelCommandWorker({ queue: channelCommandQueue(store.db, store.dialect), runtime, clock: systemClock, logger, publicUrl: () => `http://${id}.local`, pollMs, id });
    workers.push(worker);
    await worker.start();
    return { store, runtime, worker };
  };

  it('waits again for the starts a live packager still runs, and fails the one whose packager is gone too', { timeout: 180_000 }, async () => {
    // the api that will die: a real engine process on the same database
    const pgSchemaUrl = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    if (dialect === 'postgres') {
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`create schema if not exists ${schema}`);
      await admin.end();
    }
    crashed = await startEngineProcess('api', {
      DATA_DIR: dataDir, ENGINE_ROLES: 'api', ENGINE_ADMIN_EMAIL: ADMIN_EMAIL, ENGINE_ADMIN_PASSWORD: ADMIN_PASSWORD, RTMP_PORT: '0',
      ...(dialect === 'postgres' ? { DATABASE_URL: pgSchemaUrl } : {}),
    });
    const call = async (url: string, method: string, route: string, body: unknown, token?: string) => {
      const response = await fetch(`${url}${route}`, {
        method, headers: { 'content-type': 'application/json', ...(token ? { authorization: token } : {}) }, body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> & { data?: Record<string, string> } };
    };
    const token = (await call(crashed.url, 'POST', '/auth/authorize', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).body.data?.IdToken ?? '';
    const startChannel = async (name: string) => {
      const id = (await call(crashed!.url, 'POST', '/workflows', { blueprint: catalogBlueprint('srt-push'), name }, token)).body.id as string;
      expect((await call(crashed!.url, 'POST', '/channels', { workflows: [id] }, token)).status).toBe(200);
      return id;
    };

    // the packager that will be gone as well takes the first start (told to); the one that stays, the next two
    const leaving = await packager('p-leaving', 3_600_000);
    const command = (store: Store, workflowId: string) =>
      store.db.selectFrom('channel_commands').selectAll().where('workflow_id', '=', workflowId).where('kind', '=', 'start').executeTakeFirst();
    const orphaned = await startChannel('Orphaned');
    await until('the first start is sent', () => command(leaving.store, orphaned));
    await leaving.worker.poll();
    expect((await command(leaving.store, orphaned))?.claimed_by).toBe('p-leaving');
    const staying = await packager('p-staying', 50);
    const succeeding = await startChannel('Succeeding');
    const failing = await startChannel('Failing');
    for (const id of [succeeding, failing]) {
      await until(`the start of ${id} is claimed`, async () => (await command(staying.store, id))?.claimed_by === 'p-staying');
    }
    await until('the starts run on their packagers', async () => leaving.runtime.calls.length === 1 && staying.runtime.calls.length === 2);

    await crashed.kill();
    await leaving.worker.close();

    restarted = await startTestEngine({ dialect, dataDir, roles: 'api', ...(dialect === 'postgres' ? { schema } : {}) });
    const auth = { Authorization: (await restarted.login()).IdToken };
    const channel = async (id: string) => (await restarted!.api('GET', `/channels/${id}`, { headers: auth })).body as Record<string, unknown>;
    // recovery ran at start: the start no live packager holds failed, the two held ones are still under way
    expect(await channel(orphaned)).toMatchObject({ channelStatus: 'START_FAILED', statusReason: 'the engine restarted while the channel was starting' });
    expect(await channel(succeeding)).toMatchObject({ channelStatus: 'STARTING' });
    expect(await channel(failing)).toMatchObject({ channelStatus: 'STARTING' });

    staying.runtime.succeed(succeeding);
    const running = await until('the held start that succeeded runs', async () => {
      const detail = await channel(succeeding);
      return detail.channelStatus === 'RUNNING' && detail;
    });
    expect(JSON.stringify(running)).toContain(`http://packager.local/live/${succeeding}/index.m3u8`);
    expect(JSON.stringify(running)).toContain(`srt://packager.local:9000?streamid=${succeeding}`);

    staying.runtime.fail(failing, 'input "main" cannot be opened on this packager');
    const failed = await until('the held start that failed is marked so', async () => {
      const detail = await channel(failing);
      return detail.channelStatus === 'START_FAILED' && detail;
    });
    expect(failed.statusReason).toBe('input "main" cannot be opened on this packager');

    await restarted.ctx.services.live?.channels.settled();
    await staying.worker.settled();
    // the running channel was left alone; the failed start was rolled back on its packager, as a live start is
    expect(staying.runtime.calls).toEqual([`start ${succeeding}`, `start ${failing}`, `stop ${failing}`]);
  });
});
