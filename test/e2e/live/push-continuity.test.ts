// Issue 18, push inputs going from the slate to the sender and back (RTMP_PUSH, SRT_PUSH, RIST, RTP, RTP_FEC), with a real ffmpeg
// sender that leaves and returns: the media playlist keeps contiguous sequence numbers, marks a discontinuity exactly
// where one encoder run gives way to the next, and ffmpeg decodes the whole window across the changes without an
// error or warning, its timestamps never going backwards.
import { execFile } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import HLS from 'hls-parser';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { killStarted, startSender } from '../../packager/ingest/ingest-harness.js';
import { createWorkflow, startAndSettle, stopAndSettle, tinyBlueprint } from './live-helpers.js';

type MediaPlaylist = Extract<ReturnType<typeof HLS.parse>, { isMasterPlaylist: false }>;

const commandLine = (pid: number | undefined): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
};

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function run(file: string, args: string[]): Promise<{ stdout: string; stderr: string; failed: boolean }> {
  return new Promise((resolve) => {
    execFile(file, args, { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 }, (error, stdout, stderr) => resolve({ stdout, stderr, failed: error !== null }));
  });
}

const senders = {
  RTMP_PUSH: { format: 'flv', outputOptions: [] as string[] },
  SRT_PUSH: { format: 'mpegts', outputOptions: [] as string[] },
  RIST: { format: 'mpegts', outputOptions: [] as string[] },
  RTP: { format: 'rtp_mpegts', outputOptions: [] as string[] },
  RTP_FEC: { format: 'rtp_mpegts', outputOptions: ['-fec', 'prompeg=l=4:d=4'] },
} as const;

describe('push inputs from the slate to the sender and back', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'push-continuity-'));

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterEach(async () => killStarted());
  afterAll(async () => {
    await engine?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it.each(Object.keys(senders) as Array<keyof typeof senders>)('%s: monotonic sequences, a discontinuity at each change, a clean decode', { timeout: 150_000 }, async (protocol) => {
    const id = await createWorkflow(engine, auth, tinyBlueprint('srt-push', (_channel, blueprint) => {
      blueprint.components.encoder.input.type = protocol;
    }));
    const detail = await startAndSettle(engine, auth, id);
    expect(detail, JSON.stringify(detail)).toMatchObject({ channelStatus: 'RUNNING' });
    const channel = engine.ctx.services.liveRuntime!.channel(id)!;
    const onAir = () => (commandLine(channel.encoderPid()).includes('tcp://127.0.0.1') ? 'input' : commandLine(channel.encoderPid()).includes('color=c=') ? 'slate' : undefined);
    const url = `${engine.url}/live/${id}/index_${channel.plan.renditions[0]!.id}.m3u8`;
    const playlist = async (): Promise<MediaPlaylist> => {
      const parsed = HLS.parse(await (await fetch(url)).text());
      if (parsed.isMasterPlaylist) throw new Error('expected a media playlist');
      return parsed;
    };
    const runsIn = (p: MediaPlaylist) => [...new Set(p.segments.map((s) => /^(r\d+)_/.exec(s.uri)?.[1]))];
    const { format, outputOptions } = senders[protocol];
    const push = (seconds: number) => startSender(detail.inputs[0].url, format, { seconds, outputOptions: [...outputOptions] });

    // slate → sender (it stops by itself after 7 s) → slate → sender again, each with segments in the playlist
    const runsListed = async (count: number) => until(`${count} runs in the playlist`, async () => (runsIn(await playlist()).length >= count ? true : undefined));
    push(7);
    await until('the sender on air', () => (onAir() === 'input' ? true : undefined));
    await runsListed(2);
    await until('the slate back on air', () => (onAir() === 'slate' ? true : undefined));
    await runsListed(3);
    push(60);
    await until('the sender on air again', () => (onAir() === 'input' ? true : undefined));
    const window = await until('two segments of the returned sender', async () => {
      const p = await playlist();
      const runs = runsIn(p);
      return runs.length >= 4 && p.segments.filter((s) => s.uri.startsWith(`${runs.at(-1)}_`)).length >= 2 ? p : undefined;
    });

    expect(window.segments.filter((s) => s.discontinuity)).toHaveLength(runsIn(window).length - 1);
    const numbers = window.segments.map((s) => s.mediaSequenceNumber);
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
    window.segments.forEach((segment, i) => {
      if (i === 0) return;
      const changed = segment.uri.split('_')[0] !== window.segments[i - 1]!.uri.split('_')[0];
      expect(!!segment.discontinuity, `${segment.uri} after ${window.segments[i - 1]!.uri}`).toBe(changed);
      expect(segment.programDateTime!.getTime()).toBeGreaterThanOrEqual(window.segments[i - 1]!.programDateTime!.getTime());
    });

    // the window as a finished playlist: ffmpeg decodes every segment, across each change
    const local = path.join(work, `${protocol}.m3u8`);
    const text = await (await fetch(url)).text();
    fs.writeFileSync(local, `${text.replace(/^(?!#)(\S+)$/gm, `${engine.url}/live/${id}/$1`).trimEnd()}\n#EXT-X-ENDLIST\n`);
    // warnings too: a run's restarted MPEG-TS counters read as "Packet corrupt" unless the change is signalled
    const decode = await run('ffmpeg', ['-nostdin', '-v', 'warning', '-protocol_whitelist', 'file,http,tcp', '-i', local, '-f', 'null', '-']);
    expect(decode.stderr.trim()).toBe('');
    expect(decode.failed).toBe(false);
    // and each stream's decode timestamps never go back at a change
    const probe = await run('ffprobe', ['-v', 'error', '-protocol_whitelist', 'file,http,tcp', '-show_entries', 'packet=stream_index,dts_time', '-of', 'csv=p=0', local]);
    expect(probe.failed, probe.stderr).toBe(false);
    const lastDts = new Map<string, number>();
    const backwards: string[] = [];
    for (const line of probe.stdout.trim().split('\n')) {
      const [stream, dts] = line.split(',');
      if (!stream || !dts || dts === 'N/A') continue;
      const value = Number(dts);
      if (value < (lastDts.get(stream) ?? -Infinity)) backwards.push(`stream ${stream}: ${lastDts.get(stream)} → ${value}`);
      lastDts.set(stream, value);
    }
    expect(backwards).toEqual([]);

    expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
  });
});
