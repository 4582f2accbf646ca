// The command table between api and packager processes, on both dialects: a command is claimed once, a channel's later
// commands go to the packager that started it, and a call with no live packager fails at once with the reason.
// Two stores on one database stand for two processes (on PostgreSQL: two connection pools).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../kernel/core/clock.js';
import { createLogger } from '../../../kernel/core/logger.js';
import { openStore, type Store } from '../../../kernel/store/database.js';
import { channelCommandQueue, claimNext, enqueue, ownerOf, STALE_MS } from '../../../src/channels/channel-command.store.js';
import { NO_PACKAGER_REASON, RemoteChannelRuntime } from '../../../src/channels/remote-channel-runtime.js';
import { ChannelCommandWorker } from '../../../packager/channel-command-worker.js';
import type { AdBreak, ChannelEndpoints, ChannelRuntime, ChannelSpec } from '../../../kernel/seams/channel-runtime.js';
import { dropPostgresSchema, POSTGRES_URL, postgresAvailable, type DialectChoice } from '../../helpers/engine.js';

const logger = createLogger('silent');
const postgres = await postgresAvailable();

/** Records what it was asked to do: which packager ran which call is what these tests check. */
class RecordingRuntime implements ChannelRuntime {
  readonly calls: string[] = [];
  async start(spec: ChannelSpec): Promise<ChannelEndpoints> {
    this.calls.push(`start ${spec.workflowId}`);
    if (spec.activeInput === 'broken') throw new Error('input "broken" cannot be read');
    return { inputs: [], outputs: [{ destinationId: 'hls-origin', type: 'HLS', url: `http://packager/live/${spec.workflowId}/index.m3u8` }] };
  }
  async stop(workflowId: string): Promise<{ archiveUrl?: string }> {
    this.calls.push(`stop ${workflowId}`);
    return { archiveUrl: `http://packager/media/${workflowId}.mp4` };
  }
  async insertAdBreak(workflowId: string, adBreak: AdBreak): Promise<{ startsAt: number }> {
    this.calls.push(`insertAdBreak ${workflowId}`);
    return { startsAt: adBreak.startsAt + 1 };
  }
  async switchInput(workflowId: string, input: string): Promise<void> {
    this.calls.push(`switchInput ${workflowId} ${input}`);
  }
}

const spec = (workflowId: string, activeInput = 'main'): ChannelSpec => ({
  workflowId, organizationId: 'org', region: 'local', blueprint: { components: {} }, inputWhitelistCIDRs: [], archive: { enabled: false, defaultArchiveGroup: false }, activeInput,
});

describe.each(['sqlite', 'postgres'] as DialectChoice[])('channel commands on %s', (dialect) => {
  const run = dialect === 'sqlite' || postgres;
  let api: Store;
  let packagerStores: Store[] = [];
  let cleanup: () => Promise<void> = async () => undefined;
  const workers: ChannelCommandWorker[] = [];

  beforeAll(async () => {
    if (!run) return;
    if (dialect === 'sqlite') {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'channel-commands-'));
      api = await openStore({ dataDir });
      packagerStores = [await openStore({ dataDir }), await openStore({ dataDir })];
      cleanup = async () => rmSync(dataDir, { recursive: true, force: true });
    } else {
      const schema = `t_cmd_${randomBytes(5).toString('hex')}`;
      api = await openStore({ databaseUrl: POSTGRES_URL, dataDir: os.tmpdir(), schema });
      packagerStores = [await openStore({ databaseUrl: POSTGRES_URL, dataDir: os.tmpdir(), schema }), await openStore({ databaseUrl: POSTGRES_URL, dataDir: os.tmpdir(), schema })];
      cleanup = () => dropPostgresSchema(schema);
    }
  });
  afterAll(async () => {
    for (const worker of workers) await worker.close();
    for (const store of [api, ...packagerStores]) await store?.close();
    await cleanup();
  });

  const remote = () => new RemoteChannelRuntime({ db: api.db, clock: systemClock, logger, pollMs: 20, shortDeadlineMs: 5_000, longDeadlineMs: 5_000 });

  it.skipIf(!run)('fails a start at once with the reason when no packager is alive, leaving no command behind', async () => {
    await expect(remote().start(spec('w-none'))).rejects.toThrow(NO_PACKAGER_REASON);
    expect(await api.db.selectFrom('channel_commands').selectAll().execute()).toEqual([]);
    // a packager whose heartbeat aged counts as gone
    await api.db.insertInto('packager_processes').values({ id: 'old', public_url: 'http://old', started_at: 0, beat_at: Date.now() - STALE_MS - 1000 }).execute();
    await expect(remote().start(spec('w-none'))).rejects.toThrow(NO_PACKAGER_REASON);
  });

  it.skipIf(!run)('hands each pending command to exactly one of two claiming packagers', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 30; i++) ids.add(await enqueue(api.db, { workflowId: `w-claim-${i}`, kind: 'switchInput', payload: { input: 'b' }, target: null }, Date.now()));
    const claimedBy = new Map<string, string[]>();
    const claimer = async (store: Store, name: string) => {
      for (;;) {
        const command = await claimNext(store.db, store.dialect, name, Date.now());
        if (!command) return;
        claimedBy.set(command.id, [...(claimedBy.get(command.id) ?? []), name]);
      }
    };
    await Promise.all([claimer(packagerStores[0]!, 'p1'), claimer(packagerStores[1]!, 'p2')]);
    expect(new Set(claimedBy.keys())).toEqual(ids);
    expect([...claimedBy.values()].every((by) => by.length === 1)).toBe(true);
    await api.db.deleteFrom('channel_commands').execute();
  });

  it.skipIf(!run)('runs a start on one packager and every later command of that channel on the same one', async () => {
    const runtimes = [new RecordingRuntime(), new RecordingRuntime()];
    for (const [i, store] of packagerStores.entries()) {
      const worker = new ChannelCommandWorker({ queue: channelCommandQueue(store.db, store.dialect), runtime: runtimes[i]!, clock: systemClock, logger, publicUrl: () => `http://p${i}`, pollMs: 20, id: `p${i}` });
      workers.push(worker);
      await worker.start();
    }
    const channels = remote();
    for (let n = 0; n < 4; n++) {
      const id = `w-route-${n}`;
      const endpoints = await channels.start(spec(id));
      expect(endpoints.outputs[0]?.url).toBe(`http://packager/live/${id}/index.m3u8`);
      const owner = await ownerOf(api.db, id);
      const ran = runtimes[owner === 'p0' ? 0 : 1]!;
      const other = runtimes[owner === 'p0' ? 1 : 0]!;
      expect(await channels.insertAdBreak(id, { spliceEventId: 1, startsAt: 1000, duration: 30 })).toEqual({ startsAt: 1001 });
      await channels.switchInput(id, 'backup');
      expect(await channels.stop(id)).toEqual({ archiveUrl: `http://packager/media/${id}.mp4` });
      expect(ran.calls.filter((c) => c.includes(id))).toEqual([`start ${id}`, `insertAdBreak ${id}`, `switchInput ${id} backup`, `stop ${id}`]);
      expect(other.calls.filter((c) => c.includes(id))).toEqual([]);
      expect(await ownerOf(api.db, id)).toBeUndefined();
    }
    // a stop of a channel no packager runs has nothing to undo
    expect(await channels.stop('w-never')).toEqual({});
  });

  it.skipIf(!run)('brings the packager\'s error back to the caller', async () => {
    await expect(remote().start(spec('w-broken', 'broken'))).rejects.toThrow('input "broken" cannot be read');
    const rows = await api.db.selectFrom('channel_commands').select(['status', 'error']).where('workflow_id', '=', 'w-broken').execute();
    expect(rows).toEqual([{ status: 'failed', error: 'input "broken" cannot be read' }]);
  });

  it.skipIf(!run)('fails the commands of a channel at once when its packager left', async () => {
    const channels = remote();
    await channels.start(spec('w-orphan'));
    const owner = await ownerOf(api.db, 'w-orphan');
    const worker = workers.find((w) => w.id === owner)!;
    await worker.close();
    await expect(channels.switchInput('w-orphan', 'backup')).rejects.toThrow(`the packager process ${owner} that runs this channel is gone`);
    // the other packager is alive, but the channel is not there: nothing is sent to it
    const pending = await api.db.selectFrom('channel_commands').select('id').where('status', '=', 'pending').execute();
    expect(pending).toEqual([]);
    expect(await channels.stop('w-orphan')).toEqual({});
  });

  it.skipIf(!run)('finds the start a sender sent before it restarted: held while a packager may answer it, withdrawn when none can', async () => {
    for (const worker of workers.splice(0)) await worker.close();
    const restarted = remote();
    // nothing was sent for this channel
    expect(await restarted.heldStart('w-unsent')).toBeUndefined();
    // pending, and no packager is alive to take it: withdrawn, so none takes it later
    const lonely = await enqueue(api.db, { workflowId: 'w-lonely', kind: 'start', payload: spec('w-lonely'), target: null }, Date.now());
    expect(await restarted.heldStart('w-lonely')).toBeUndefined();
    expect(await api.db.selectFrom('channel_commands').select(['status', 'error']).where('id', '=', lonely).executeTakeFirst()).toEqual({ status: 'failed', error: NO_PACKAGER_REASON });

    const runtime = new RecordingRuntime();
    const worker = new ChannelCommandWorker({ queue: channelCommandQueue(packagerStores[0]!.db, packagerStores[0]!.dialect), runtime, clock: systemClock, logger, publicUrl: () => 'http://p-late', pollMs: 20, id: 'p-late' });
    workers.push(worker);
    await worker.start();
    // pending while a packager is alive: waited for, the packager's answer comes back
    await enqueue(api.db, { workflowId: 'w-held', kind: 'start', payload: spec('w-held'), target: null }, Date.now());
    const held = await restarted.heldStart('w-held');
    expect(held).toBeDefined();
    expect((await held!.result()).outputs[0]?.url).toBe('http://packager/live/w-held/index.m3u8');
    // answered with a failure meanwhile: the packager's reason
    await enqueue(api.db, { workflowId: 'w-held-broken', kind: 'start', payload: spec('w-held-broken', 'broken'), target: null }, Date.now());
    await worker.poll();
    await worker.settled();
    const failed = await restarted.heldStart('w-held-broken');
    await expect(failed!.result()).rejects.toThrow('input "broken" cannot be read');
    expect(runtime.calls).toEqual(['start w-held', 'start w-held-broken']);
  });
});
