// The private ffmpeg listener behind a UDP front (SRT, RIST, RTP): it terminates the protocol on loopback and
// remuxes (copy, no decode) to MPEG-TS on its stdout, which the front hands to the encoder. The front watches it:
// restarted when it ends (an SRT listener ends with its sender), killed and restarted when its sender went
// silent (a RIST or RTP listener never ends by itself), killed with its process group when the input closes.
import { spawn, type ChildProcess } from 'node:child_process';

export interface ListenerOptions {
  ffmpegPath: string;
  /** ffmpeg input arguments ending with `-i <url>` */
  inputArgs: string[];
  onData(bytes: Buffer): void;
  /** the listener ended (by itself or killed); the front restarts it unless it is closing */
  onExit(stderrTail: string): void;
}

const TAIL_LINES = 20;

export class ListenerProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private tail: string[] = [];

  constructor(private readonly options: ListenerOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    const child = spawn(this.options.ffmpegPath, [
      '-hide_banner', '-nostdin', '-loglevel', 'error', ...this.options.inputArgs, '-map', '0', '-c', 'copy', '-f', 'mpegts', 'pipe:1',
    ], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.tail = [];
    child.stdout?.on('data', (bytes: Buffer) => this.options.onData(bytes));
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      for (const line of text.split(/\r?\n/)) {
        if (!line.trim()) continue;
        this.tail.push(line);
        if (this.tail.length > TAIL_LINES) this.tail.shift();
      }
    });
    this.exited = new Promise((resolve) => {
      const done = () => {
        if (this.child === child) this.child = undefined;
        resolve();
        this.options.onExit(this.tail.join('\n'));
      };
      child.once('exit', done);
      child.once('error', done);
    });
  }

  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves when it is gone. */
  async kill(graceMs = 1_000): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined) return this.exited;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-pid, name);
      } catch {
        // gone already
      }
    };
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
