// The no-progress watchdog of runFluent: a stuck ffmpeg is killed and its run fails with a clear reason.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCommand, runFluent } from '../../../vod-encoder/ffmpeg-runner.js';
import { tempDir } from './helpers.js';

describe('runFluent watchdog', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('ffmpeg-runner'));
  });
  afterAll(async () => cleanup());

  it('kills an ffmpeg that makes no progress and fails the run with the reason', async () => {
    // Nothing ever writes to the FIFO: ffmpeg blocks on it forever without a single stats line.
    const fifo = path.join(dir, 'stuck.fifo');
    execFileSync('mkfifo', [fifo]);
    const cmd = newCommand().input(fifo).inputOptions('-f', 'mpegts').output(path.join(dir, 'out.mp4'));
    const run = runFluent(cmd, { durationSec: 10, errorCode: 'VOD_ENCODE_FAILED', stallMs: 500 });
    const started = Date.now();
    const result = await run.done;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('VOD_ENCODE_FAILED');
      expect(result.error.reason).toMatch(/no progress/);
    }
  }, 10_000);

  it('lets a run that progresses finish', async () => {
    const cmd = newCommand().input('testsrc=size=64x64:rate=10:duration=1').inputOptions('-f', 'lavfi')
      .outputOptions('-c:v', 'libx264', '-preset', 'ultrafast').output(path.join(dir, 'ok.mp4'));
    const result = await runFluent(cmd, { durationSec: 1, errorCode: 'VOD_ENCODE_FAILED', stallMs: 5000 }).done;
    expect(result.ok).toBe(true);
  }, 20_000);
});
