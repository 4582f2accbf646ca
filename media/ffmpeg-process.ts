// One ffmpeg child in its own process group (so a kill reaches every thread and helper it spawned), with a pid file
// in the channel's work dir: an engine that was killed finds and ends its orphans at the next start.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The `-progress` block ffmpeg prints every stats period (key=value lines ending with `progress=`). */
export type ProgressSample = Record<string, string>;

export interface FfmpegExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** the last lines ffmpeg wrote to stderr: the reason of a failure */
  stderrTail: string;
}

export interface FfmpegProcessOptions {
  ffmpegPath: string;
  args: string[];
  /** pid file to write (and remove at exit) */
  pidFile: string;
  onProgress?: (sample: ProgressSample) => void;
}

export class FfmpegProcess {
  readonly exited: Promise<FfmpegExit>;
  private readonly child: ChildProcess;
  private readonly tail: string[] = [];
  private done = false;

  constructor(private readonly options: FfmpegProcessOptions) {
    this.child = spawn(options.ffmpegPath, options.args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    if (this.child.pid) writeFileSync(options.pidFile, String(this.child.pid));
    let block: ProgressSample = {};
    let pending = '';
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const eq = line.indexOf('=');
        if (eq <= 0) continue;
        const key = line.slice(0, eq).trim();
        block[key] = line.slice(eq + 1).trim();
        if (key === 'progress') {
          options.onProgress?.(block);
          block = {};
        }
      }
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line.trim()) this.tail.push(line.trim());
      if (this.tail.length > 30) this.tail.splice(0, this.tail.length - 30);
    });
    this.exited = new Promise((resolve) => {
      const finish = (code: number | null, signal: NodeJS.Signals | null, extra?: string) => {
        if (this.done) return;
        this.done = true;
        rmSync(options.pidFile, { force: true });
        resolve({ code, signal, stderrTail: [...this.tail.slice(-8), ...(extra ? [extra] : [])].join('\n').slice(-1500) });
      };
      this.child.on('error', (error) => finish(-1, null, `ffmpeg could not run: ${error.message}`));
      this.child.on('exit', (code, signal) => finish(code, signal));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.done;
  }

  /**
   * Asks ffmpeg to finish (SIGINT: it closes the segment in progress and its playlists), then kills the group when it
   * has not exited after `graceMs`.
   */
  async finish(graceMs: number): Promise<FfmpegExit> {
    if (this.done) return this.exited;
    try {
      process.kill(this.child.pid ?? 0, 'SIGINT');
    } catch {
      /* gone */
    }
    const timer = setTimeout(() => killGroup(this.child.pid), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    killGroup(this.child.pid); // helpers ffmpeg may have left in its group
    return exit;
  }

  /** Kills the whole group and resolves once ffmpeg has exited. */
  async kill(): Promise<FfmpegExit> {
    if (!this.done) killGroup(this.child.pid);
    return this.exited;
  }
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/**
 * Ends the ffmpeg processes a previous engine left behind in the given channel work dirs (pid files `*.pid`). A pid
 * is only killed when its command line still names the pid file's directory, so a recycled pid is never hit.
 */
export function killOrphans(dirs: readonly string[]): number {
  let killed = 0;
  for (const dir of dirs) {
    let files: string[] = [];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.pid'));
    } catch {
      continue;
    }
    for (const file of files) {
      const pidFile = path.join(dir, file);
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (Number.isInteger(pid) && pid > 1 && cmdline.includes(dir)) {
          killGroup(pid);
          killed += 1;
        }
      } catch {
        /* not running any more */
      }
      rmSync(pidFile, { force: true });
    }
  }
  return killed;
}
