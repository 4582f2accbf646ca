// The one process type of the media toolbox (media/ffmpeg-process.ts) and the short-run form over it (exec-tool.ts),
// driven by small shell scripts standing in for ffmpeg: progress blocks, the stderr tail, stops, time limits, exits.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execTool } from '../../../media/exec-tool.js';
import { FfmpegProcess, type FfmpegProgress, type ProgressSample } from '../../../media/ffmpeg-process.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'media-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sh = (script: string, more: Partial<ConstructorParameters<typeof FfmpegProcess>[0]> = {}) =>
  new FfmpegProcess({ bin: 'sh', args: ['-c', script], ...more });

describe('FfmpegProcess', () => {
  it('hands over each -progress block, raw and as running totals', async () => {
    const samples: Array<[ProgressSample, FfmpegProgress]> = [];
    const child = sh("printf 'frame=5\\nout_time_us=2000000\\nspeed=1.5x\\nprogress=continue\\nframe=9\\nprogress=end\\n'", {
      onProgress: (sample, progress) => samples.push([sample, progress]),
    });
    const exit = await child.exited;
    await child.closed;
    expect(exit.code).toBe(0);
    expect(samples).toEqual([
      [{ frame: '5', out_time_us: '2000000', speed: '1.5x', progress: 'continue' }, { frames: 5, outTimeMs: 2000, speed: 1.5 }],
      [{ frame: '9', progress: 'end' }, { frames: 9, outTimeMs: 2000, speed: 1.5 }],
    ]);
    expect(child.progress).toEqual({ frames: 9, outTimeMs: 2000, speed: 1.5 });
  });

  it('keeps the last stderr lines, bounded, as the reason of the exit', async () => {
    const exit = await sh("for i in 1 2 3 4 5; do echo \"line $i\" >&2; done; printf 'partial' >&2; exit 3", { tailLines: 3 }).exited;
    expect(exit).toMatchObject({ code: 3, signal: null, stderrTail: 'line 4\nline 5\npartial' });
  });

  it('says why a binary that does not exist could not run, with exit code -1', async () => {
    const exit = await new FfmpegProcess({ bin: path.join(dir, 'no-such-ffmpeg'), args: [] }).exited;
    expect(exit.code).toBe(-1);
    expect(exit.stderrTail).toMatch(/no-such-ffmpeg could not run: .*ENOENT/);
  });

  it('writes its pid file while it runs and removes it at the exit', async () => {
    const pidFile = path.join(dir, 'run.pid');
    const child = sh('sleep 30', { pidFile });
    expect(existsSync(pidFile)).toBe(true);
    expect(child.running).toBe(true);
    const exit = await child.kill();
    expect(exit.signal).toBe('SIGKILL');
    expect(existsSync(pidFile)).toBe(false);
    expect(child.running).toBe(false);
  });

  it('stops politely first and kills when the grace runs out', async () => {
    const polite = await sh('sleep 30').stop(2_000);
    expect(polite.signal).toBe('SIGTERM');
    const deaf = sh("trap '' TERM INT; echo ready >&2; while :; do sleep 0.05; done");
    await waitFor(() => deaf.stderrTail() === 'ready');
    const started = Date.now();
    const exit = await deaf.stop(200);
    expect(exit.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('finishes with SIGINT to the tool and then ends the helpers left in its group', async () => {
    const child = sh("sleep 30 & trap 'exit 0' INT; echo ready >&2; while :; do sleep 0.05; done");
    await waitFor(() => child.stderrTail() === 'ready');
    const exit = await child.finish(2_000);
    expect(exit.code).toBe(0);
    await waitFor(() => !groupAlive(child.pid ?? 0));
  });

  it('hands raw stdout over as it comes and waits for it with closed', async () => {
    const chunks: Buffer[] = [];
    const child = sh("printf 'abc'; printf 'def'", { onStdout: (bytes) => chunks.push(bytes) });
    await Promise.all([child.exited, child.closed]);
    expect(Buffer.concat(chunks).toString()).toBe('abcdef');
  });

  it('writes stdin and keeps the whole output with keepOutput', async () => {
    const exit = await new FfmpegProcess({ bin: 'cat', args: [], stdin: Buffer.from('x'.repeat(100_000)), keepOutput: 1_000_000, group: false }).exited;
    expect(exit.code).toBe(0);
    expect(exit.stdout.length).toBe(100_000);
  });
});

describe('execTool', () => {
  it('answers the exit code, stdout and stderr of a tool that ran', async () => {
    expect(await execTool('sh', ['-c', 'echo out; echo err >&2; exit 0'])).toEqual({ exitCode: 0, stdout: 'out\n', stderr: 'err\n' });
    expect(await execTool('sh', ['-c', 'echo bad >&2; exit 4'])).toEqual({ exitCode: 4, stdout: '', stderr: 'bad\n' });
  });

  it('answers -1 with the reason for a missing tool, a time limit and an abort', async () => {
    const missing = await execTool(path.join(dir, 'no-such-tool'), []);
    expect(missing.exitCode).toBe(-1);
    expect(missing.stderr).toMatch(/^\nspawn .*no-such-tool ENOENT$/);
    const late = await execTool('sh', ['-c', 'exec sleep 30'], 100);
    expect(late).toEqual({ exitCode: -1, stdout: '', stderr: '\nkilled by SIGTERM (time limit or outside kill)' });
    const abort = new AbortController();
    const running = execTool('sh', ['-c', 'exec sleep 30'], 60_000, abort.signal);
    setTimeout(() => abort.abort(), 50);
    expect(await running).toEqual({ exitCode: -1, stdout: '', stderr: '\nkilled by SIGKILL' });
  });
});

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
