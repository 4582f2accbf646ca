// Runs ffmpeg (through fluent-ffmpeg) and other CLI tools with progress, cancel and a stderr tail for reasons.
import { execFile } from 'node:child_process';
import ffmpeg, { type FfmpegCommand } from 'fluent-ffmpeg';
import { failure, stderrTail, type VodErrorCode, type VodResult } from './errors.js';

export interface EncodeProgress {
  /** 0..100 over the whole job. */
  percent: number;
  /** Encode speed as a multiple of real time (ffmpeg's `speed=`). */
  speedX: number;
  /** Seconds left, from media time left divided by speed. */
  etaSec: number;
  /** Which step of the job is running. */
  stage: string;
}

export interface RunningTool {
  done: Promise<VodResult<void>>;
  cancel(): void;
}

export interface RunFluentOptions {
  durationSec: number;
  errorCode: VodErrorCode;
  onProgress?: (p: { timeSec: number; speedX: number }) => void;
}

const TIME_RE = /time=\s*(-?\d+):(\d+):(\d+(?:\.\d+)?)/;
const SPEED_RE = /speed=\s*(\d+(?:\.\d+)?)x/;

/** Parses one ffmpeg stats line (`frame=… time=00:00:04.00 … speed=2.1x`); null when it is not one. */
export function parseStatsLine(line: string): { timeSec: number; speedX: number } | null {
  const t = TIME_RE.exec(line);
  if (!t) return null;
  const timeSec = Number(t[1]) * 3600 + Number(t[2]) * 60 + Number(t[3]);
  const s = SPEED_RE.exec(line);
  return { timeSec: Math.max(0, timeSec), speedX: s ? Number(s[1]) : 0 };
}

/** Starts a prepared fluent-ffmpeg command; resolves to ok or a typed failure with the stderr tail. */
export function runFluent(command: FfmpegCommand, opts: RunFluentOptions): RunningTool {
  const lines: string[] = [];
  let canceled = false;
  const done = new Promise<VodResult<void>>((resolve) => {
    command
      .on('stderr', (line: string) => {
        lines.push(line);
        if (lines.length > 60) lines.shift();
        const stats = parseStatsLine(line);
        if (stats && opts.onProgress) opts.onProgress(stats);
      })
      .on('error', (err: Error) => {
        if (canceled) resolve(failure('VOD_ENCODE_CANCELED', 'canceled by the caller'));
        else resolve(failure(opts.errorCode, stderrTail(lines.join('\n')) || err.message));
      })
      .on('end', () => resolve({ ok: true, value: undefined }))
      // A cancel that came before the process existed is applied as soon as it does.
      .on('start', () => { if (canceled) command.kill('SIGKILL'); });
    command.run();
  });
  return {
    done,
    cancel() {
      canceled = true;
      command.kill('SIGKILL');
    },
  };
}

export interface ToolOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs a CLI tool to completion; never rejects (a spawn failure is exit code -1 with the message). */
export function execTool(bin: string, args: string[], timeoutMs = 600_000, signal?: AbortSignal): Promise<ToolOutput> {
  return new Promise((resolve) => {
    const opts = { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, ...(signal ? { signal } : {}) };
    execFile(bin, args, opts, (err, stdout, stderr) => {
      if (!err) return resolve({ exitCode: 0, stdout, stderr });
      const code = typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number'
        ? Number((err as { code: number }).code) : -1;
      resolve({ exitCode: code, stdout: stdout ?? '', stderr: `${stderr ?? ''}\n${err.message}` });
    });
  });
}

// Tool paths come from the engine config (DESIGN: FFMPEG_PATH/FFPROBE_PATH), set once at boot; PATH by default.
const tools = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' };

export function configureTools(paths: { ffmpegPath?: string; ffprobePath?: string }): void {
  if (paths.ffmpegPath) {
    tools.ffmpeg = paths.ffmpegPath;
    ffmpeg.setFfmpegPath(paths.ffmpegPath);
  }
  if (paths.ffprobePath) {
    tools.ffprobe = paths.ffprobePath;
    ffmpeg.setFfprobePath(paths.ffprobePath);
  }
}
export function ffmpegBin(): string {
  return tools.ffmpeg;
}
export function ffprobeBin(): string {
  return tools.ffprobe;
}

/** A fluent-ffmpeg command bound to the configured binary. */
export function newCommand(): FfmpegCommand {
  return ffmpeg().setFfmpegPath(tools.ffmpeg);
}

/** Runs a short ffmpeg command with argv; ok or a typed failure with the stderr tail. */
export async function ffmpegOnce(args: string[], errorCode: VodErrorCode, signal?: AbortSignal): Promise<VodResult<void>> {
  const out = await execTool(ffmpegBin(), ['-hide_banner', '-nostdin', '-y', ...args], 600_000, signal);
  if (out.exitCode === 0) return { ok: true, value: undefined };
  if (signal?.aborted) return failure('VOD_ENCODE_CANCELED', 'canceled by the caller');
  return failure(errorCode, stderrTail(out.stderr));
}
