// Issue 18 faults: the encoder killed with -9 (restart with backoff, alarm raised and cleared), the input lost (slate
// on air, INPUT_LOSS raised and cleared when it returns), and the engine killed with -9 while a channel runs (the next
// engine ends the orphaned ffmpeg and resumes the channel with its numbering).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { alive, createWorkflow, loopClip, startAndSettle, stopAndSettle, tinyBlueprint, until, mediaPlaylist, sleep } from './live-helpers.js';

describe('live channel faults', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
    await loopClip(engine);
    await generateMedia('clip', path.join(engine.dataDir, 'media', 'test-media', 'short.mp4'), { seconds: 5, size: '320x180' });
  });
  afterAll(async () => engine?.close());

  const alarms = async (id: string, history = false) =>
    (await engine.api('GET', `/channels/${id}/alarms${history ? '?history=true' : ''}`, { headers: auth })).body.items as Array<{ code: string; active: boolean }>;

  it('restarts an encoder killed with -9, raising ENCODER_RESTARTED and clearing it once segments flow again', { timeout: 90_000 }, async () => {
    const id = await createWorkflow(engine, auth, tinyBlueprint('mp4-loop-test'), 'Crash');
    const detail = await startAndSettle(engine, auth, id);
    const url = detail.outputs[0].url.replace('index.m3u8', 'index_720p.m3u8');
    const channel = engine.ctx.services.liveRuntime!.channel(id)!;
    const pid = channel.encoderPid();
    process.kill(pid!, 'SIGKILL');
    await until('the alarm', async () => ((await alarms(id)).some((a) => a.code === 'ENCODER_RESTARTED' && a.active) ? true : undefined));
    await until('the restarted run', async () => ((await mediaPlaylist(url)).segments.some((s) => s.uri.startsWith('r2_')) ? true : undefined));
    expect(channel.encoderPid()).not.toBe(pid);
    expect(alive(pid)).toBe(false);
    await until('the alarm to clear', async () => ((await alarms(id)).length === 0 ? true : undefined));
    expect(await alarms(id, true)).toMatchObject([{ code: 'ENCODER_RESTARTED', active: false }]);
    const playlist = await mediaPlaylist(url);
    expect(playlist.segments.filter((s) => s.discontinuity)).toHaveLength(1);
    expect((await engine.api('GET', `/channels/${id}`, { headers: auth })).body.channelStatus).toBe('RUNNING');
    expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
  });

  it('puts the slate on air when the input is lost, raises INPUT_LOSS, and goes back to the input when it returns', { timeout: 90_000 }, async () => {
    // a 5 s file over HTTP without looping: it ends (the input is lost), and a probe finds it again
    const blueprint = tinyBlueprint('mp4-loop-test');
    (blueprint.components as Record<string, { input: Record<string, unknown> }>).encoder!.input = {
      name: 'http-in', type: 'URL_PULL', sources: [{ url: `${engine.url}/media/test-media/short.mp4` }],
    };
    const id = await createWorkflow(engine, auth, blueprint, 'Loss');
    const detail = await startAndSettle(engine, auth, id);
    expect(detail.channelStatus, detail.statusReason).toBe('RUNNING');
    const url = detail.outputs[0].url.replace('index.m3u8', 'index_720p.m3u8');
    await until('the input loss alarm', async () => ((await alarms(id, true)).some((a) => a.code === 'INPUT_LOSS') ? true : undefined));
    // the slate run (r2) fills while the input is away; the input comes back in a later run
    await until('the input back on air', async () => ((await mediaPlaylist(url)).segments.some((s) => /^r[3-9]_/.test(s.uri)) ? true : undefined));
    await until('the alarm to clear', async () => ((await alarms(id)).length === 0 ? true : undefined));
    const history = await alarms(id, true);
    expect(history.filter((a) => a.code === 'INPUT_LOSS').every((a) => !a.active)).toBe(true);
    const playlist = await mediaPlaylist(url);
    // the slate went on air (it may have been replaced before finishing a segment when the input came back at once)
    expect(await (await fetch(`${engine.url}/metrics`)).text()).toMatch(/engine_live_encoder_runs_total\{kind="slate"\} [1-9]/);
    const sequence = playlist.segments.map((s) => s.mediaSequenceNumber);
    expect(sequence).toEqual([...sequence].sort((a, b) => a - b));
    expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
  });
});

describe('an engine killed with -9 while a channel runs', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-live-kill-'));
  let child: ChildProcess | undefined;
  let port = 0;
  const base = () => `http://127.0.0.1:${port}`;

  beforeAll(async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    await generateMedia('clip', path.join(dataDir, 'test-media', 'sample.mp4'), { seconds: 4, size: '320x180' });
  });
  afterAll(async () => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function bootEngine(): Promise<void> {
    child = spawn(process.execPath, ['bin/engine.js', 'start'], {
      env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, ENGINE_ADMIN_EMAIL: ADMIN_EMAIL, ENGINE_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    await until('the engine', async () => ((await fetch(`${base()}/healthz`)).ok ? true : undefined));
  }

  async function api(method: string, url: string, token: string, body?: unknown) {
    const response = await fetch(`${base()}${url}`, { method, headers: { Authorization: token, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return (await response.json()) as Record<string, any>;
  }

  it('ends the orphaned ffmpeg and resumes the channel with monotonic numbering at the next start', { timeout: 150_000 }, async () => {
    await bootEngine();
    const login = async () => ((await (await fetch(`${base()}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }) })).json()) as { data: { IdToken: string } }).data.IdToken;
    let token = await login();
    const { id } = await api('POST', '/workflows', token, { name: 'Survivor', blueprint: tinyBlueprint('mp4-loop-test') });
    await api('POST', '/channels', token, { workflows: [id] });
    const running = await until('RUNNING', async () => {
      const detail = await api('GET', `/channels/${id}`, token);
      return detail.channelStatus === 'RUNNING' ? detail : undefined;
    });
    const url = (running.outputs[0].url as string).replace('index.m3u8', 'index_720p.m3u8');
    await sleep(3000);
    const before = await mediaPlaylist(url);
    const workDir = path.join(dataDir, 'live-work', id);
    const pidFile = fs.readdirSync(workDir).find((f) => f.endsWith('.pid'))!;
    const orphan = Number(fs.readFileSync(path.join(workDir, pidFile), 'utf8'));
    expect(alive(orphan)).toBe(true);

    child!.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    expect(alive(orphan)).toBe(true); // nothing ended it yet: the next engine must

    await bootEngine();
    token = await login();
    await until('the orphan to end', async () => (!alive(orphan) ? true : undefined), 10_000);
    const resumed = await until('the resumed run', async () => {
      const playlist = await mediaPlaylist(url);
      return playlist.segments.some((s) => !s.uri.startsWith('r1_')) ? playlist : undefined;
    });
    // the same window goes on: numbers contiguous from before the kill, one discontinuity where the new engine resumed
    expect(resumed.segments[0]!.mediaSequenceNumber).toBeLessThanOrEqual(before.segments.at(-1)!.mediaSequenceNumber);
    const numbers = resumed.segments.map((s) => s.mediaSequenceNumber);
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
    const firstNew = resumed.segments.findIndex((s) => !s.uri.startsWith('r1_'));
    expect(resumed.segments[firstNew]!.discontinuity).toBe(true);
    expect(resumed.segments.filter((s) => s.discontinuity)).toHaveLength(1);
    expect(resumed.segments[firstNew]!.programDateTime!.getTime()).toBeGreaterThanOrEqual(resumed.segments[firstNew - 1]!.programDateTime!.getTime());
    expect((await api('GET', `/channels/${id}`, token)).channelStatus).toBe('RUNNING');
    const newPid = Number(fs.readFileSync(path.join(workDir, fs.readdirSync(workDir).find((f) => f.endsWith('.pid'))!), 'utf8'));
    expect(alive(newPid)).toBe(true);

    await api('DELETE', '/channels', token, { workflows: [id] });
    await until('DONE', async () => ((await api('GET', `/channels/${id}`, token)).channelStatus === 'DONE' ? true : undefined));
    expect(alive(newPid)).toBe(false);
    child!.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  });
});
