// The private ffmpeg listener behind a UDP front (SRT, RIST, RTP): it terminates the protocol on loopback and
// remuxes (copy, no decode) to MPEG-TS on its stdout, which the front hands to the encoder. The front watches it:
// restarted when it ends (an SRT listener ends with its sender), killed and restarted when its sender went
// silent (a RIST or RTP listener never ends by itself), killed with its process group when the input closes.
// It is "ready" once its UDP port is bound: datagrams sent before are lost, so the relay holds them until then.
import { readFile } from 'node:fs/promises';
import { FfmpegProcess } from '../../../media/ffmpeg-process.js';

export interface ListenerExit {
  stderrTail: string;
  /** ended by kill(), not by itself: a planned restart, not a failure */
  killed: boolean;
}

export interface ListenerOptions {
  ffmpegPath: string;
  /** ffmpeg input arguments ending with `-i <url>` */
  inputArgs: string[];
  /** the loopback UDP port the listener binds: ready() is reported once it is bound */
  udpPort: number;
  onData(bytes: Buffer): void;
  /** the listener's UDP port is bound: what is sent to it from now on reaches ffmpeg */
  onReady(): void;
  /** the listener ended (by itself or killed); the front restarts it unless it is closing */
  onExit(exit: ListenerExit): void;
}

const TAIL_LINES = 20;
/** How often /proc/net/udp is read while ffmpeg starts (measured: it binds 60–100 ms after the spawn). */
const BIND_POLL_MS = 10;
/** A listener not bound by then is taken as ready anyway, so held datagrams are not kept forever. */
const BIND_WAIT_MS = 5_000;
/** Without /proc/net/udp (not Linux) the bind cannot be seen: ready this long after the spawn. */
const UNSEEN_BIND_MS = 500;

/**
 * Whether a UDP socket is bound to local `port` (any address), from the kernel's socket tables; undefined when they
 * cannot be read (not Linux). Read-only: probing by binding the port ourselves could take it from ffmpeg.
 */
export async function udpPortBound(port: number): Promise<boolean | undefined> {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let found: boolean | undefined;
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    const text = await readFile(table, 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    found ??= false;
    // "  sl  local_address rem_address st …": the local address is the second column
    if (text.split('\n').slice(1).some((line) => line.trim().split(/\s+/)[1]?.endsWith(suffix))) return true;
  }
  return found;
}

export class ListenerProcess {
  private child: FfmpegProcess | undefined;
  /** the child being killed: its last output belongs to the sender that left and is dropped */
  private retired: FfmpegProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly options: ListenerOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    const child: FfmpegProcess = new FfmpegProcess({
      bin: this.options.ffmpegPath,
      args: ['-hide_banner', '-nostdin', '-loglevel', 'error', ...this.options.inputArgs, '-map', '0', '-c', 'copy', '-f', 'mpegts', 'pipe:1'],
      tailLines: TAIL_LINES,
      onStdout: (bytes) => {
        if (this.retired !== child) this.options.onData(bytes);
      },
    });
    this.child = child;
    this.exited = child.exited.then((exit) => {
      const killed = this.retired === child;
      if (this.child === child) this.child = undefined;
      if (killed) this.retired = undefined;
      this.options.onExit({ stderrTail: exit.stderrTail, killed });
    });
    void this.reportBound(child);
  }

  /** Calls onReady once this child's UDP port is bound (or after BIND_WAIT_MS), unless it ended before. */
  private async reportBound(child: FfmpegProcess): Promise<void> {
    const startedAt = Date.now();
    for (;;) {
      if (this.child !== child || this.retired === child) return;
      const bound = await udpPortBound(this.options.udpPort);
      if (this.child !== child || this.retired === child) return;
      const waited = Date.now() - startedAt;
      if (bound === true || waited >= BIND_WAIT_MS || (bound === undefined && waited >= UNSEEN_BIND_MS)) {
        this.options.onReady();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, BIND_POLL_MS));
    }
  }

  /**
   * Asks the listener to end (SIGTERM: ffmpeg writes out the packets it holds) and keeps its output; resolves once that
   * output has all been handed to onData, or after `graceMs` when it is then killed.
   */
  async finish(graceMs: number): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return this.exited;
    await Promise.all([child.stop(graceMs), this.exited, child.closed]);
  }

  /** SIGTERM to the process group, SIGKILL after `graceMs` (0: SIGKILL at once); resolves when it is gone. */
  async kill(graceMs = 1_000): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return this.exited;
    this.retired = child;
    await Promise.all([child.stop(graceMs), this.exited]);
  }
}
