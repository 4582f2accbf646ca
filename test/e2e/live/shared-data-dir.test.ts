// Packagers of one cluster share DATA_DIR and the database (DESIGN.md "Processes and scale"): a packager process
// starting beside another must leave that one's running channels alone (no orphan kill, no resume, no "failed"
// report), and the channel still stops through its own packager. A packager that is gone (dead here, or silent in the
// database from another host) has its RUNNING channels taken over by a survivor; one whose channel was taken over
// ends it on its side.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { readOwner } from '../../../packager/channel-owner.js';
import { beat, leave, STALE_MS } from '../../../src/channels/channel-command.store.js';
import { alive, createWorkflow, loopClip, sleep, startAndSettle, stopAndSettle, tinyBlueprint, until } from './live-helpers.js';

async function lastSequence(url: string): Promise<number> {
  const parsed = HLS.parse(await (await fetch(url)).text());
  if (parsed.isMasterPlaylist) throw new Error('expected a media playlist');
  return parsed.segments.at(-1)?.mediaSequenceNumber ?? -1;
}

describe('two packager processes on one data directory and database', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-live-shared-'));
  let first: TestEngine;
  let second: ChildProcess | undefined;
  let auth: Record<string, string>;
  let port = 0;

  beforeAll(async () => {
    first = await startTestEngine({ dataDir });
    auth = { Authorization: (await first.login()).IdToken };
    await loopClip(first);
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
  });
  afterAll(async () => {
    if (second?.exitCode === null) second.kill('SIGKILL');
    await first?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the first packager\'s channel running while a second packager starts, and stops it', { timeout: 120_000 }, async () => {
    const id = await createWorkflow(first, auth, tinyBlueprint('mp4-loop-test'), 'Shared');
    expect((await startAndSettle(first, auth, id)).channelStatus).toBe('RUNNING');
    const channel = first.ctx.services.liveRuntime?.channel(id);
    const encoder = channel?.encoderPid();
    expect(alive(encoder)).toBe(true);
    const workDir = path.join(dataDir, 'live-work', id);
    expect(readOwner(workDir)).toMatchObject({ pid: process.pid, runtimeId: first.ctx.services.liveRuntime?.id });

    // a packager-only process, as a cluster runs them: other pid, same volume, same SQLite database
    second = spawn(process.execPath, ['bin/engine.js', 'start'], {
      env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, ENGINE_ROLES: 'packager', RTMP_PORT: '0', ENGINE_ADMIN_EMAIL: ADMIN_EMAIL, ENGINE_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    await until('the second packager', async () => ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok ? true : undefined));
    const firstWorker = first.ctx.services.channelCommandWorker?.id;
    await until('the second packager\'s heartbeat', async () => {
      const rows = await first.ctx.store.db.selectFrom('packager_processes').select('id').execute();
      return rows.some((row) => row.id !== firstWorker) ? true : undefined;
    });

    // its start is over (it beats after its packager part started): nothing of the channel changed
    const url = `${first.url}/live/${id}/index_${channel!.plan.renditions[0]!.id}.m3u8`;
    const before = await lastSequence(url);
    await until('the playlist to go on', async () => ((await lastSequence(url)) > before ? true : undefined), 20_000);
    expect(alive(encoder)).toBe(true);
    expect(channel?.encoderPid()).toBe(encoder); // the same encoder run: it was neither killed nor restarted
    expect(readOwner(workDir)?.runtimeId).toBe(first.ctx.services.liveRuntime?.id);
    const owner = await first.ctx.store.db.selectFrom('channel_owners').select('packager_id').where('workflow_id', '=', id).executeTakeFirst();
    expect(owner?.packager_id).toBe(firstWorker);
    const detail = (await first.api('GET', `/channels/${id}`, { headers: auth })).body;
    expect(detail.channelStatus).toBe('RUNNING');
    const alarms = (await first.api('GET', `/channels/${id}/alarms?history=true`, { headers: auth })).body.items as unknown[];
    expect(alarms).toEqual([]);

    expect((await stopAndSettle(first, auth, id)).channelStatus).toBe('DONE');
    expect(alive(encoder)).toBe(false);
    expect(fs.existsSync(workDir)).toBe(false);
    second.kill('SIGTERM');
    await new Promise((r) => second!.once('exit', r));
  });

  it('ends a channel here, files kept, once another packager has taken its work dir over, and fails it when nothing is left to resume', { timeout: 60_000 }, async () => {
    const id = await createWorkflow(first, auth, tinyBlueprint('mp4-loop-test'), 'Fenced');
    expect((await startAndSettle(first, auth, id)).channelStatus).toBe('RUNNING');
    const runtime = first.ctx.services.liveRuntime!;
    const encoder = runtime.channel(id)?.encoderPid();
    const workDir = path.join(dataDir, 'live-work', id);
    // what a live packager elsewhere writes when it judged this one gone (a stall, a cut from the database)
    const elsewhere = 'elsewhere.example-1-abc';
    const heartbeat = () => beat(first.ctx.store.db, elsewhere, 'http://elsewhere.example', Date.now());
    await heartbeat();
    const beating = setInterval(() => void heartbeat(), 1000);
    try {
      fs.writeFileSync(path.join(workDir, 'owner.json'), JSON.stringify({ host: 'elsewhere.example', pid: 1, runtimeId: elsewhere }));
      await until('the channel to end here', async () => (runtime.channel(id) === undefined ? true : undefined), 15_000);
      await until('its encoder to end', async () => (!alive(encoder) ? true : undefined), 10_000);
      expect(fs.existsSync(path.join(workDir, 'state.json'))).toBe(true); // the new owner resumes from it
      await sleep(4000); // more sweeps: the owner beats, so this packager does not take the channel back
      expect(runtime.channel(id)).toBeUndefined();
      expect(readOwner(workDir)?.runtimeId).toBe(elsewhere);
    } finally {
      clearInterval(beating);
    }
    // the other packager goes too, and had lost the channel's state: this one takes the channel back, finds nothing
    // to resume it from, and says so instead of leaving it pretending to run
    await leave(first.ctx.store.db, elsewhere);
    fs.rmSync(path.join(workDir, 'state.json'));
    const failed = await until('the channel reported failed', async () => {
      const detail = (await first.api('GET', `/channels/${id}`, { headers: auth })).body;
      return /its packager was gone and nothing of this channel was left to resume/.test(String(detail.statusReason)) ? detail : undefined;
    }, 30_000);
    expect(failed.channelStatus).toBe('RUNNING'); // spec 3.1 has no transition for it: the alarm and reason tell
    expect(fs.existsSync(workDir)).toBe(false);
    expect((await stopAndSettle(first, auth, id)).channelStatus).toBe('DONE');
  });
});

describe('a packager on another host of the shared volume that is gone', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-live-takeover-'));
  let api: TestEngine;
  let survivor: TestEngine | undefined;
  let gone: ChildProcess | undefined;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestEngine({ dataDir, roles: 'api' });
    auth = { Authorization: (await api.login()).IdToken };
    await loopClip(api);
  });
  afterAll(async () => {
    if (gone?.exitCode === null) gone.kill('SIGKILL');
    await survivor?.close();
    await api?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('has its RUNNING channel taken over by a surviving packager once its heartbeat is stale', { timeout: 120_000 }, async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    gone = spawn(process.execPath, ['bin/engine.js', 'start'], {
      env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, ENGINE_ROLES: 'packager', RTMP_PORT: '0', ENGINE_ADMIN_EMAIL: ADMIN_EMAIL, ENGINE_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    await until('the packager process', async () => ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok ? true : undefined));
    await until('its heartbeat', async () => ((await api.ctx.store.db.selectFrom('packager_processes').select('id').execute()).length > 0 ? true : undefined));
    const id = await createWorkflow(api, auth, tinyBlueprint('mp4-loop-test'), 'Takeover');
    expect((await startAndSettle(api, auth, id)).channelStatus).toBe('RUNNING');
    const workDir = path.join(dataDir, 'live-work', id);
    const owner = readOwner(workDir)!;
    expect(owner.pid).toBe(gone.pid);

    // its host goes down: the process and its encoder die; the owner file names that other host
    const encoders = fs.readdirSync(workDir).filter((f) => f.endsWith('.pid')).map((f) => Number(fs.readFileSync(path.join(workDir, f), 'utf8')));
    gone.kill('SIGKILL');
    for (const pid of encoders) process.kill(-pid, 'SIGKILL');
    fs.writeFileSync(path.join(workDir, 'owner.json'), JSON.stringify({ ...owner, host: 'gone.example' }));
    // the api process serves no /live: the playlist is read where every packager writes it, on the shared volume
    const media = path.join(dataDir, 'live', id, 'index_720p.m3u8');
    const before = HLS.parse(fs.readFileSync(media, 'utf8')) as Extract<ReturnType<typeof HLS.parse>, { isMasterPlaylist: false }>;

    // a packager starting now cannot see that host: it leaves the channel (neither failed nor taken) while the gone
    // packager's heartbeat is fresh, and takes it over once it is stale
    const killedAt = Date.now();
    survivor = await startTestEngine({ dataDir, roles: 'packager' });
    const runtime = survivor.ctx.services.liveRuntime!;
    if (Date.now() - killedAt < STALE_MS - 1000) expect(runtime.channel(id)).toBeUndefined();
    await until('the takeover', async () => runtime.channel(id), 30_000);
    expect(readOwner(workDir)?.runtimeId).toBe(runtime.id);
    const resumed = await until('segments of the resumed run', async () => {
      const playlist = HLS.parse(fs.readFileSync(media, 'utf8')) as typeof before;
      return playlist.segments.some((s) => !s.uri.startsWith('r1_')) ? playlist : undefined;
    });
    const numbers = resumed.segments.map((s) => s.mediaSequenceNumber);
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
    expect(numbers[0]).toBeLessThanOrEqual(before.segments.at(-1)!.mediaSequenceNumber);
    expect(resumed.segments.filter((s) => s.discontinuity)).toHaveLength(1);
    expect((await api.api('GET', `/channels/${id}`, { headers: auth })).body.channelStatus).toBe('RUNNING');

    // the channel's calls now reach the survivor (it owns the channel in the database within a heartbeat)
    await until('the ownership', async () => {
      const row = await api.ctx.store.db.selectFrom('channel_owners').select('packager_id').where('workflow_id', '=', id).executeTakeFirst();
      return row?.packager_id === runtime.id ? true : undefined;
    });
    expect((await stopAndSettle(api, auth, id)).channelStatus).toBe('DONE');
    expect(runtime.channel(id)).toBeUndefined();
    expect(fs.existsSync(workDir)).toBe(false);
  });
});
