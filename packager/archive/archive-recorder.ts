// Spec 3.3 archives: while the channel runs, every finished segment of the archived rendition is kept (a hard link, so
// the live window may delete its copy); at the last step of stopping they are merged into one MP4 in the media store.
// One pipeline runs per channel, so the raw segments sit under `0/` (the first pipeline's name-modifier prefix).
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { copyFile, link, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface ArchiveResult {
  /** file inside the media store (DATA_DIR/media/archives/…) */
  file: string;
  /** path relative to DATA_DIR/media */
  relativePath: string;
  segments: number;
  seconds: number;
}

export class ArchiveRecorder {
  private readonly rawDir: string;
  private readonly segments: Array<{ name: string; duration: number }> = [];
  private ready: Promise<unknown>;

  constructor(private readonly options: { dataDir: string; workflowId: string; ffmpegPath: string }) {
    this.rawDir = path.join(options.dataDir, 'archive-work', options.workflowId, '0');
    this.ready = mkdir(this.rawDir, { recursive: true });
    // a channel resumed after an engine restart keeps what it recorded before
    try {
      for (const name of readdirSync(this.rawDir).filter((f) => /^\d{6}\./.test(f)).sort()) this.segments.push({ name, duration: 0 });
    } catch {
      /* first start */
    }
  }

  /** Keeps one finished segment (`file` in the channel's public dir). */
  async record(file: string, duration: number): Promise<void> {
    await this.ready;
    const name = `${String(this.segments.length).padStart(6, '0')}${path.extname(file)}`;
    const target = path.join(this.rawDir, name);
    await link(file, target).catch(() => copyFile(file, target));
    this.segments.push({ name, duration });
  }

  get recordedSeconds(): number {
    return this.segments.reduce((sum, s) => sum + s.duration, 0);
  }

  /** Merges what was recorded into one MP4 (stream copy); undefined when nothing was recorded. */
  async finish(): Promise<ArchiveResult | undefined> {
    await this.ready;
    try {
      if (this.segments.length === 0) return undefined;
      const list = path.join(this.rawDir, 'list.txt');
      await writeFile(list, this.segments.map((s) => `file '${s.name}'\n`).join(''));
      const relativePath = path.posix.join('archives', `${this.options.workflowId}.mp4`);
      const file = path.join(this.options.dataDir, 'media', relativePath);
      await mkdir(path.dirname(file), { recursive: true });
      const partial = `${file}.partial`;
      await new Promise<void>((resolve, reject) => {
        execFile(this.options.ffmpegPath, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list,
          '-map', '0', '-c', 'copy', '-bsf:a', 'aac_adtstoasc', '-movflags', '+faststart', '-f', 'mp4', partial],
        { timeout: 15 * 60_000, maxBuffer: 8 * 1024 * 1024 }, (error, _out, stderr) => (error ? reject(new Error(`the archive could not be merged: ${stderr.trim().slice(-500) || error.message}`)) : resolve()));
      });
      await rename(partial, file);
      return { file, relativePath, segments: this.segments.length, seconds: this.recordedSeconds };
    } finally {
      await rm(path.dirname(this.rawDir), { recursive: true, force: true });
    }
  }

  /** Drops what was recorded (a failed start). */
  async discard(): Promise<void> {
    await this.ready;
    await rm(path.dirname(this.rawDir), { recursive: true, force: true });
  }
}
