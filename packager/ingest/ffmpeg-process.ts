// An ffmpeg child we own: its own process group (so a kill reaches anything it started), progress read from
// `-progress pipe:1`, a stderr tail for reasons, and a kill that escalates to SIGKILL. Listener ffmpegs (RIST
// above all) never exit when their sender leaves, so whoever starts one must call kill() when it stops.
import { spawn, type ChildProcess } from 'node:child_process';

export interface FfmpegProgress {
  /** video frames output so far */
  frames: number;
  /** media time output so far, ms */
  outTimeMs: number;
  speed: number;
}

export interface FfmpegExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface FfmpegProcess {
  readonly pid: number;
  readonly progress: FfmpegProgress;
  readonly exited: Promise<FfmpegExit>;
  stderrTail(): string;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves when the process is gone */
  kill(graceMs?: number): Promise<FfmpegExit>;
}

const TAIL_LINES = 40;

export function spawnFfmpeg(ffmpegPath: string, args: readonly string[], onProgress?: (progress: FfmpegProgress) => void): FfmpegProcess {
  const child: ChildProcess = spawn(ffmpegPath, ['-hide_banner', '-nostdin', '-nostats', '-progress', 'pipe:1', ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${ffmpegPath} could not be started`);
  const pid = child.pid;
  const progress: FfmpegProgress = { frames: 0, outTimeMs: 0, speed: 0 };
  const tail: string[] = [];
  let stdoutRest = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    const lines = (stdoutRest + text).split('\n');
    stdoutRest = lines.pop() ?? '';
    for (const line of lines) {
      const [key, value] = line.split('=', 2);
      if (key === 'frame') progress.frames = Number(value) || 0;
      else if (key === 'out_time_us') progress.outTimeMs = Math.max(0, Math.round(Number(value) / 1000) || 0);
      else if (key === 'speed') progress.speed = Number.parseFloat(value ?? '') || 0;
      else if (key === 'progress') onProgress?.({ ...progress });
    }
  });
  let stderrRest = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    const lines = (stderrRest + text).split(/\r?\n|\r/);
    stderrRest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
    }
  });
  let gone = false;
  const exited = new Promise<FfmpegExit>((resolve) => {
    child.once('exit', (code, signal) => {
      gone = true;
      resolve({ code, signal });
    });
    child.once('error', () => {
      gone = true;
      resolve({ code: null, signal: null });
    });
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // already gone
    }
  };
  return {
    pid,
    progress,
    exited,
    stderrTail: () => [...tail, stderrRest].filter(Boolean).join('\n'),
    kill: async (graceMs = 2_000) => {
      if (!gone) {
        signalGroup('SIGTERM');
        const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}
