// Runs ffmpeg (through fluent-ffmpeg) and other CLI tools with progress, cancel and a stderr tail for reasons.
import ffmpeg, { type FfmpegCommand } from 'fluent-ffmpeg';
import { failure, stderrTail, type VodErrorCode, type VodResult } from './errors.js';
import { execTool } from '../kernel/core/exec-tool.js';

// the VOD modules reach the shared tool runner through this one
export { execTool, type ToolOutput } from '../kernel/core/exec-tool.js';

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
  /**
   * Kills ffmpeg and fails the run when its media time has not advanced for this long (a stuck input or encoder);
   * generous by default (DEFAULT_STALL_MS), 0 turns the watchdog off.
   */
  stallMs?: number;
}

/** No progress for this long means ffmpeg is stuck: far above any pause of a healthy encode. */
export const DEFAULT_STALL_MS = 5 * 60_000;

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
  let stalled = false;
  const stallMs = opts.stallMs ?? DEFAULT_STALL_MS;
  let watchdog: NodeJS.Timeout | undefined;
  let lastTimeSec = -1;
  const arm = (): void => {
    if (stallMs <= 0) return;
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      stalled = true;
      command.kill('SIGKILL');
    }, stallMs);
    watchdog.unref();
  };
  const done = new Promise<VodResult<void>>((resolve) => {
    const settle = (r: VodResult<void>): void => {
      clearTimeout(watchdog);
      resolve(r);
    };
    command
      .on('stderr', (line: string) => {
        lines.push(line);
        if (lines.length > 60) lines.shift();
        const stats = parseStatsLine(line);
        if (!stats) return;
        if (stats.timeSec > lastTimeSec) {
          lastTimeSec = stats.timeSec;
          arm();
        }
        opts.onProgress?.(stats);
      })
      .on('error', (err: Error) => {
        if (canceled) settle(failure('VOD_ENCODE_CANCELED', 'canceled by the caller'));
        else if (stalled) settle(failure(opts.errorCode, `ffmpeg made no progress for ${Math.round(stallMs / 1000)} s and was killed`));
        else settle(failure(opts.errorCode, stderrTail(lines.join('\n')) || err.message));
      })
      .on('end', () => settle({ ok: true, value: undefined }))
      // A cancel that came before the process existed is applied as soon as it does.
      .on('start', () => {
        if (canceled) command.kill('SIGKILL');
        else arm();
      });
    command.run();
  });
  return {
    done,
    cancel() {
      canceled = true;
      clearTimeout(watchdog);
      command.kill('SIGKILL');
    },
  };
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
