// The clip the catalog's mp4-loop-test blueprint loops (issue 26 §4): a fresh DATA_DIR has none, so the engine makes
// it at start, in the background, with ffmpeg's own test sources. It appears whole or not at all (written beside,
// then hard-linked into place), and a clip already there (the user's own) is never replaced.
import { existsSync } from 'node:fs';
import { link, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../kernel/core/logger.js';
import { execTool } from '../media/exec-tool.js';
import type { FrontFactory } from './ingest/front-registry.js';
import { IngestConfigError, mp4Front, type PullInputSettings } from './ingest/pull/pull-fronts.js';

/** Where the catalog's MP4 loop blueprint reads its clip, relative to DATA_DIR. */
export const SAMPLE_MEDIA_PATH = 'test-media/sample.mp4';

const SAMPLE_SECONDS = 12;
/** 12 s of 640x360 at ultrafast takes about half a second of one core; the generous bound is for a loaded machine */
const GENERATE_TIMEOUT_MS = 120_000;

/** ffmpeg's colour test card with a 440 Hz tone, H.264/AAC in a fast-start MP4, 2 s GOPs like the blueprint's. */
export function sampleMediaArgs(out: string): string[] {
  return [
    '-hide_banner', '-nostdin', '-v', 'error', '-y',
    '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30',
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
    '-t', String(SAMPLE_SECONDS), '-map', '0:v', '-map', '1:a',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '28', '-pix_fmt', 'yuv420p', '-g', '60',
    '-c:a', 'aac', '-b:a', '96k', '-ac', '2',
    '-movflags', '+faststart', '-f', 'mp4', out,
  ];
}

export class SampleMedia {
  readonly file: string;
  private making: Promise<void> | undefined;
  private failure: string | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly options: { dataDir: string; ffmpegPath: string; logger: Logger }) {
    this.file = path.join(path.resolve(options.dataDir), SAMPLE_MEDIA_PATH);
  }

  /** Starts making the clip when it is missing; never rejects (a failure is logged and told to the channels that wait). */
  start(): void {
    if (this.making || existsSync(this.file)) return;
    this.making = this.make().catch((error: unknown) => {
      if (this.abort.signal.aborted) return;
      this.failure = error instanceof Error ? error.message : String(error);
      this.options.logger.warn({ file: this.file, reason: this.failure }, 'the sample clip could not be made');
    });
  }

  /**
   * Resolves once `file` can be read when it is the clip being made (at most `timeoutMs`); at once for any other file.
   * Throws with the reason when making the clip failed or took too long.
   */
  async waitFor(file: string, timeoutMs: number): Promise<void> {
    if (path.resolve(file) !== this.file || !this.making || existsSync(this.file)) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), timeoutMs); });
    try {
      const outcome = await Promise.race([this.making, late]);
      if (outcome === 'late') throw new Error(`the sample clip ${SAMPLE_MEDIA_PATH} was not ready within ${Math.round(timeoutMs / 1000)} s`);
    } finally {
      clearTimeout(timer);
    }
    if (!existsSync(this.file)) throw new Error(`the sample clip ${SAMPLE_MEDIA_PATH} could not be made: ${this.failure ?? 'unknown reason'}`);
  }

  /** Ends a generation under way (engine shutdown). */
  close(): void {
    this.abort.abort();
  }

  private async make(): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    // beside the clip (same file system, so the link is atomic), hidden, unique per process
    const partial = path.join(path.dirname(this.file), `.sample-${process.pid}-${randomBytes(4).toString('hex')}.mp4`);
    try {
      const out = await execTool(this.options.ffmpegPath, sampleMediaArgs(partial), GENERATE_TIMEOUT_MS, this.abort.signal);
      if (out.exitCode !== 0) throw new Error(`ffmpeg: ${out.stderr.trim().split('\n')[0] || `exit code ${out.exitCode}`}`);
      // link, not rename: it fails when a clip appeared meanwhile (the user's, or another packager's on a shared
      // DATA_DIR), which is then kept
      await link(partial, this.file).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return;
        // a file system without hard links: a rename is as atomic, it only replaces a clip that appeared meanwhile
        await rename(partial, this.file);
      });
      this.options.logger.info({ file: this.file }, 'made the sample clip of the MP4 loop blueprint');
    } finally {
      await rm(partial, { force: true });
    }
  }
}

/** How long a channel started before the clip is made waits for it: within the channel's 60 s start timeout. */
const SAMPLE_WAIT_MS = 45_000;

/** The MP4 front, which first waits for the sample clip when that is what the input loops and it is being made. */
export function mp4FrontAwaitingSample(sample: SampleMedia): FrontFactory {
  return async ({ input, dataDir }) => {
    const settings = input as PullInputSettings;
    const url = settings.sources?.[0]?.url?.trim();
    if (url && !/^https?:\/\//i.test(url)) {
      await sample.waitFor(path.resolve(dataDir, url), SAMPLE_WAIT_MS).catch((error: unknown) => {
        throw new IngestConfigError(`input ${input.name}: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
    const front = mp4Front(settings, dataDir);
    return { front, endpoint: { url: front.publicUrl } };
  };
}
