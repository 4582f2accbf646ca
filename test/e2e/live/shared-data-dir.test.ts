// Packagers of one cluster share DATA_DIR and the database (DESIGN.md "Processes and scale"): a packager process
// starting beside another must leave that one's running channels alone (no orphan kill, no resume, no "failed"
// report), and the channel still stops through its own packager.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { readOwner } from '../../../packager/channel-owner.js';
import { alive, createWorkflow, loopClip, startAndSettle, stopAndSettle, tinyBlueprint } from './live-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}`);
}

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
});
