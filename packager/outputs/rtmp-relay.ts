// RTMP push to an RTMP endpoint (spec 1): a second, copy-only ffmpeg per RTMP output reads the channel's own live
// rendition playlist (local file, no re-encode) and publishes it as FLV. It restarts with backoff when the endpoint
// refuses or drops it, and raises OUTPUT_FAILURE meanwhile; the HLS outputs are never affected.
import path from 'node:path';
import type { Logger } from '../../kernel/core/logger.js';
import { FfmpegProcess } from '../../media/ffmpeg-process.js';

const BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000];

export interface RtmpRelayOptions {
  ffmpegPath: string;
  /** the rendition's media playlist in the channel's public dir */
  playlist: string;
  url: string;
  /** where the relay's pid file goes (the channel's work dir: an engine restart ends an orphan) */
  workDir: string;
  name: string;
  logger: Logger;
  alarm(active: boolean, message: string): void;
}

export class RtmpRelay {
  private process: FfmpegProcess | undefined;
  private timer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private failing = false;
  private stopped = false;
  private startedAt = 0;

  constructor(private readonly options: RtmpRelayOptions) {}

  start(): void {
    if (this.stopped) return;
    const { options } = this;
    this.startedAt = Date.now();
    this.process = new FfmpegProcess({
      bin: options.ffmpegPath,
      // its reason, bounded: the last lines of stderr go into the alarm
      tailLines: 8,
      tailChars: 1500,
      // the work dir in the command line lets the orphan check recognise the process (media/ffmpeg-orphans.ts)
      args: ['-hide_banner', '-nostdin', '-loglevel', 'error', '-live_start_index', '-1', '-i', options.playlist,
        '-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy', '-metadata', `comment=${options.workDir}`, '-f', 'flv', options.url],
      pidFile: path.join(options.workDir, `rtmp-${options.name}.pid`),
      onProgress: () => {
        // publishing for a while: the endpoint accepted the stream
        if (Date.now() - this.startedAt > 5000) {
          this.attempts = 0;
          if (this.failing) {
            this.failing = false;
            options.alarm(false, `RTMP output ${options.name} publishes again`);
          }
        }
      },
    });
    void this.process.exited.then((exit) => {
      if (this.stopped) return;
      const reason = exit.stderrTail.split('\n').slice(-2).join(' | ') || `exit ${exit.code ?? exit.signal}`;
      options.logger.warn({ output: options.name, reason }, 'RTMP output ended; retrying');
      if (!this.failing) {
        this.failing = true;
        options.alarm(true, `RTMP output ${options.name} to ${new URL(options.url).host} failed: ${reason}`);
      }
      this.timer = setTimeout(() => this.start(), BACKOFF_MS[Math.min(this.attempts++, BACKOFF_MS.length - 1)]);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.process?.kill();
  }
}
