// The one way the engine runs ffmpeg, ffprobe and other media CLI tools (issue 29): a child in its own process group
// (so a kill reaches every thread and helper it spawned), `-progress` blocks read from its stdout, a stderr tail for
// the reason of a failure, and polite-then-hard stops. The live encoder, the ingest fronts, the UDP listeners, the
// VOD encoder's short runs (exec-tool.ts) and the segment probe (media-probe.ts) are all this type.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/** The `-progress` block ffmpeg prints every stats period (key=value lines ending with `progress=`). */
export type ProgressSample = Record<string, string>;

/** The running totals of the `-progress` blocks, typed. */
export interface FfmpegProgress {
  /** video frames output so far */
  frames: number;
  /** media time output so far, ms */
  outTimeMs: number;
  speed: number;
}

export interface FfmpegExit {
  /** the exit code; -1 when the tool could not run; null when a signal ended it */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** the last lines the tool wrote to stderr (and why it could not run): the reason of a failure */
  stderrTail: string;
  /** why the tool did not run to its own end: it could not start, or its output went over `keepOutput` */
  error?: string;
  /** everything written to stdout and stderr, with `keepOutput`; '' otherwise */
  stdout: string;
  stderr: string;
}

export interface FfmpegProcessOptions {
  /** the binary: ffmpeg, ffprobe or another CLI tool */
  bin: string;
  args: readonly string[];
  /** its own process group (default): stops reach every helper it started; false: signals reach the tool alone */
  group?: boolean;
  /** written to stdin, which is then closed; stdin is /dev/null without it */
  stdin?: Buffer;
  /** stdout carries `-progress pipe:1`: each complete block, raw and as running totals */
  onProgress?: (sample: ProgressSample, progress: FfmpegProgress) => void;
  /** stdout carries media: each chunk as it comes */
  onStdout?: (bytes: Buffer) => void;
  /** keep all of stdout and stderr (a short run) up to this many bytes each; more kills the tool, as execFile does */
  keepOutput?: number;
  /** written with the pid at the start and removed at the exit: killOrphans finds it after a crash */
  pidFile?: string;
  /** stderr lines kept for the reason (default 40) */
  tailLines?: number;
  /** the exit's stderrTail is cut to its last this many characters */
  tailChars?: number;
  /** `timeoutSignal` (SIGTERM by default) when it still runs after this long (0: no limit, as execFile) */
  timeoutMs?: number;
  timeoutSignal?: NodeJS.Signals;
  /** SIGKILL when aborted */
  abort?: AbortSignal;
}

export class FfmpegProcess {
  /** resolves once the tool has exited (with `keepOutput`, once its output is all read too); never rejects */
  readonly exited: Promise<FfmpegExit>;
  /** resolves once its stdout and stderr are closed: all its output has been handed over */
  readonly closed: Promise<void>;
  readonly progress: FfmpegProgress = { frames: 0, outTimeMs: 0, speed: 0 };
  private readonly child: ChildProcess;
  private readonly group: boolean;
  private readonly tail: string[] = [];
  private stderrRest = '';
  private done = false;

  constructor(private readonly options: FfmpegProcessOptions) {
    this.group = options.group ?? true;
    this.child = spawn(options.bin, options.args, {
      detached: this.group,
      stdio: [options.stdin ? 'pipe' : 'ignore', options.onProgress || options.onStdout || options.keepOutput ? 'pipe' : 'ignore', 'pipe'],
    });
    const child = this.child;
    if (child.pid && options.pidFile) writeFileSync(options.pidFile, String(child.pid));
    if (options.stdin) {
      // a tool may stop reading once it has what it needs: a closed pipe is not an error here
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(options.stdin);
    }
    const kept = { stdout: [] as Buffer[], stderr: [] as Buffer[], stdoutBytes: 0, stderrBytes: 0 };
    let overflow: string | undefined;
    const keep = (stream: 'stdout' | 'stderr', bytes: Buffer): void => {
      if (options.keepOutput === undefined || overflow) return;
      const size = (stream === 'stdout' ? (kept.stdoutBytes += bytes.length) : (kept.stderrBytes += bytes.length));
      kept[stream].push(bytes);
      if (size > options.keepOutput) {
        overflow = `${stream} maxBuffer length exceeded`;
        this.send('SIGTERM');
      }
    };
    const readProgress = progressReader((sample) => options.onProgress?.(sample, { ...this.progress }), this.progress);
    // decoders keep a character split between two chunks whole
    const stdoutText = new StringDecoder('utf8');
    const stderrText = new StringDecoder('utf8');
    child.stdout?.on('data', (bytes: Buffer) => {
      keep('stdout', bytes);
      options.onStdout?.(bytes);
      if (options.onProgress) readProgress(stdoutText.write(bytes));
    });
    child.stderr?.on('data', (bytes: Buffer) => {
      keep('stderr', bytes);
      this.readStderr(stderrText.write(bytes));
    });
    const timer = !options.timeoutMs || options.timeoutMs <= 0 ? undefined : setTimeout(() => this.send(options.timeoutSignal ?? 'SIGTERM'), options.timeoutMs);
    const onAbort = (): void => this.send('SIGKILL');
    if (options.abort?.aborted) onAbort();
    else options.abort?.addEventListener('abort', onAbort, { once: true });
    this.closed = new Promise((resolve) => {
      child.once('close', () => resolve());
      child.once('error', () => resolve());
    });
    this.exited = new Promise((resolve) => {
      const finish = (code: number | null, signal: NodeJS.Signals | null, error?: string): void => {
        if (this.done) return;
        this.done = true;
        clearTimeout(timer);
        options.abort?.removeEventListener('abort', onAbort);
        if (options.pidFile) rmSync(options.pidFile, { force: true });
        if (this.stderrRest.trim()) this.pushLine(this.stderrRest);
        this.stderrRest = '';
        const why = error === undefined ? [] : [`${path.basename(options.bin)} could not run: ${error}`];
        let stderrTail = [...this.tail, ...why].join('\n');
        if (options.tailChars !== undefined) stderrTail = stderrTail.slice(-options.tailChars);
        resolve({
          code, signal, stderrTail,
          ...(error !== undefined || overflow ? { error: error ?? overflow } : {}),
          stdout: Buffer.concat(kept.stdout).toString('utf8'),
          stderr: Buffer.concat(kept.stderr).toString('utf8'),
        });
      };
      child.on('error', (error) => finish(-1, null, error.message));
      // a short run's output is read to its end (as execFile does); a long-running child answers at its exit
      child.on(options.keepOutput === undefined ? 'exit' : 'close', (code: number | null, signal: NodeJS.Signals | null) => finish(code, signal));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.done;
  }

  /** The last stderr lines so far, the line being written included. */
  stderrTail(): string {
    return [...this.tail, this.stderrRest].filter(Boolean).join('\n');
  }

  /**
   * Asks the tool to end with `signal` (SIGTERM: ffmpeg writes out what it holds), then SIGKILLs it when it has not
   * exited after `graceMs` (0: SIGKILL at once).
   */
  async stop(graceMs = 2_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<FfmpegExit> {
    if (this.done) return this.exited;
    this.send(graceMs <= 0 ? 'SIGKILL' : signal);
    const timer = setTimeout(() => this.send('SIGKILL'), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  /**
   * Asks ffmpeg to finish its output (SIGINT to ffmpeg alone: it closes the segment in progress and its playlists),
   * kills the group when it has not exited after `graceMs`, and then the helpers it may have left in its group.
   */
  async finish(graceMs: number): Promise<FfmpegExit> {
    if (this.done) return this.exited;
    if (this.child.pid) signal(this.child.pid, 'SIGINT');
    const timer = setTimeout(() => this.send('SIGKILL'), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    this.send('SIGKILL');
    return exit;
  }

  /** Kills the whole group and resolves once the tool has exited. */
  async kill(): Promise<FfmpegExit> {
    if (!this.done) this.send('SIGKILL');
    return this.exited;
  }

  /** The signal to the group (to the tool alone when the group is gone or not its own). */
  private send(sig: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (!pid) return;
    if (!this.group || !signal(-pid, sig)) signal(pid, sig);
  }

  private readStderr(text: string): void {
    const lines = (this.stderrRest + text).split(/\r?\n|\r/);
    this.stderrRest = lines.pop() ?? '';
    for (const line of lines) this.pushLine(line);
  }

  private pushLine(line: string): void {
    if (!line.trim()) return;
    this.tail.push(line.trim());
    const max = this.options.tailLines ?? 40;
    if (this.tail.length > max) this.tail.splice(0, this.tail.length - max);
  }
}

/** Whether the signal was delivered (false: no such process or group). */
function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** A `-progress` stream reader: updates `totals` and hands over each block as it completes. */
function progressReader(onBlock: (sample: ProgressSample) => void, totals: FfmpegProgress): (text: string) => void {
  let block: ProgressSample = {};
  let pending = '';
  return (text) => {
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const eq = line.indexOf('=');
      if (eq <= 0) continue;
      const key = line.slice(0, eq).trim();
      const value = line.slice(eq + 1).trim();
      block[key] = value;
      if (key === 'frame') totals.frames = Number(value) || 0;
      else if (key === 'out_time_us') totals.outTimeMs = Math.max(0, Math.round(Number(value) / 1000) || 0);
      else if (key === 'speed') totals.speed = Number.parseFloat(value) || 0;
      else if (key === 'progress') {
        onBlock(block);
        block = {};
      }
    }
  };
}

/** An FfmpegProcess that started: it has a pid. */
export type StartedFfmpeg = FfmpegProcess & { readonly pid: number };

/**
 * An ffmpeg with its progress on stdout (`-progress pipe:1`, no stats on stderr) and no stdin, in its own group;
 * throws when it cannot be started. Listener ffmpegs (RIST above all) never exit when their sender leaves, so
 * whoever starts one must stop() it.
 */
export function spawnFfmpeg(ffmpegPath: string, args: readonly string[], onProgress?: (progress: FfmpegProgress) => void): StartedFfmpeg {
  const child = new FfmpegProcess({
    bin: ffmpegPath,
    args: ['-hide_banner', '-nostdin', '-nostats', '-progress', 'pipe:1', ...args],
    onProgress: (_sample, progress) => onProgress?.(progress),
  });
  if (child.pid === undefined) throw new Error(`${ffmpegPath} could not be started`);
  return child as StartedFfmpeg;
}
