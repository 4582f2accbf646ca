// The rtmp-push-abr catalog blueprint end to end with the RTMP_PUSH front: the channel runs on the slate until a sender
// pushes with the right stream key, the signal goes on air, a sender that leaves brings the slate back with INPUT_LOSS
// and its return clears it; the stop gives DONE and the archive.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { createWorkflow, decodeLive, startAndSettle, stopAndSettle, tinyBlueprint, until } from './live-helpers.js';

/** A camera: testsrc + tone pushed as FLV for `seconds`. */
function push(url: string, seconds = 60): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=15',
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', String(seconds), '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'ultrafast',
    '-tune', 'zerolatency', '-g', '30', '-c:a', 'aac', '-b:a', '64k', '-f', 'flv', url], { stdio: 'ignore' });
  return { child, exited: new Promise((r) => child.once('exit', (code) => r(code))) };
}

describe('a channel from the rtmp-push-abr blueprint', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  const senders: ChildProcess[] = [];

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => {
    for (const sender of senders) if (sender.exitCode === null) sender.kill('SIGKILL');
    await engine?.close();
  });

  it('runs on the slate until the right stream key pushes, survives the sender leaving, and archives', { timeout: 180_000 }, async () => {
    const id = await createWorkflow(engine, auth, tinyBlueprint('rtmp-push-abr'), 'Camera');
    const detail = await startAndSettle(engine, auth, id);
    expect(detail.channelStatus, detail.statusReason).toBe('RUNNING');
    const input = detail.inputs[0];
    expect(input).toMatchObject({ name: 'rtmp-in', type: 'RTMP_PUSH', url: expect.stringMatching(/^rtmp:\/\/.+/), streamKey: expect.any(String) });
    const media = detail.outputs[0].url.replace('index.m3u8', 'index_1080p.m3u8');
    const uris = async () => {
      const parsed = HLS.parse(await (await fetch(media)).text());
      if (parsed.isMasterPlaylist) throw new Error('expected a media playlist');
      return parsed.segments.map((s) => s.uri);
    };
    expect((await uris()).every((u) => u.startsWith('r1_'))).toBe(true); // the slate

    // a wrong key is refused: nothing but the slate goes on air
    const intruder = push((input.url as string).replace(input.streamKey, 'wrong-key'), 5);
    senders.push(intruder.child);
    expect(await intruder.exited).not.toBe(0);
    expect((await uris()).every((u) => u.startsWith('r1_'))).toBe(true);

    const camera = push(input.url as string);
    senders.push(camera.child);
    await until('the signal on air', async () => ((await uris()).some((u) => u.startsWith('r2_')) ? true : undefined));
    const decoded = await decodeLive(detail.outputs[0].url, 4);
    expect(decoded.errors).toBe('');

    // the sender leaves: slate and INPUT_LOSS; it comes back: on air again and the alarm clears
    camera.child.kill('SIGKILL');
    const alarms = async (history = false) => (await engine.api('GET', `/channels/${id}/alarms${history ? '?history=true' : ''}`, { headers: auth })).body.items as Array<{ code: string; active: boolean }>;
    await until('INPUT_LOSS', async () => ((await alarms()).some((a) => a.code === 'INPUT_LOSS') ? true : undefined));
    const back = push(input.url as string);
    senders.push(back.child);
    await until('the alarm to clear', async () => ((await alarms()).length === 0 ? true : undefined));
    expect((await alarms(true)).some((a) => a.code === 'INPUT_LOSS' && !a.active)).toBe(true);
    const last = (await uris()).at(-1)!;
    expect(Number(/^r(\d+)_/.exec(last)![1])).toBeGreaterThanOrEqual(4); // slate, camera, slate, camera again

    const done = await stopAndSettle(engine, auth, id);
    expect(done).toMatchObject({ channelStatus: 'DONE', archive: { status: 'AVAILABLE' } });
    back.child.kill('SIGKILL');
  });

  it('refuses a sender outside the workflow\'s input allow-list: the channel stays on the slate', { timeout: 90_000 }, async () => {
    const created = await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: tinyBlueprint('rtmp-push-abr'), name: 'Allow-listed', inputWhitelistCIDRs: ['10.99.0.0/16'] } });
    const id = created.body.id as string;
    const detail = await startAndSettle(engine, auth, id);
    expect(detail.channelStatus, detail.statusReason).toBe('RUNNING');
    const outsider = push(detail.inputs[0].url as string, 6);
    senders.push(outsider.child);
    expect(await outsider.exited).not.toBe(0);
    const playlist = HLS.parse(await (await fetch(detail.outputs[0].url.replace('index.m3u8', 'index_1080p.m3u8'))).text());
    if (playlist.isMasterPlaylist) throw new Error('expected a media playlist');
    expect(playlist.segments.every((s) => s.uri.startsWith('r1_'))).toBe(true);
    expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
  });
});
