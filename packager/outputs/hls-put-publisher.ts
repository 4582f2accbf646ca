// HLS pushed to a generic CDN by HTTP (spec 1 "a generic CDN for HLS"): each finished segment is PUT, then the media
// playlist that names it, in that order, so the CDN never serves a playlist naming a missing segment. Segments that
// left the window are DELETEd. A failing CDN raises OUTPUT_FAILURE; the origin output is not affected.
import { readFile } from 'node:fs/promises';
import type { Logger } from '../../kernel/core/logger.js';

export interface PublisherEvents {
  alarm(active: boolean, message: string): void;
  bytesSent(bytes: number): void;
}

const CONTENT_TYPES: Record<string, string> = { m3u8: 'application/vnd.apple.mpegurl', ts: 'video/mp2t', m4s: 'video/iso.segment', mp4: 'video/mp4' };
const TIMEOUT_MS = 10_000;
// beyond this many waiting uploads the CDN cannot keep up: the oldest segment uploads are dropped, playlists still go
const MAX_QUEUE = 64;

export class HlsPutPublisher {
  private readonly base: URL;
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  private failing = false;
  private closed = false;

  /** `url`: the CDN URL of the multivariant playlist; every other file goes next to it. */
  constructor(url: string, private readonly events: PublisherEvents, private readonly logger: Logger) {
    this.base = new URL('.', url);
    this.multivariantName = decodeURIComponent(new URL(url).pathname.split('/').pop() || 'index.m3u8');
  }

  readonly multivariantName: string;

  urlOf(name: string): string {
    return new URL(encodeURIComponent(name), this.base).toString();
  }

  /** A file of the public dir (segment, init section) to send. */
  putFile(name: string, file: string): void {
    if (this.queued > MAX_QUEUE) {
      this.logger.warn({ name }, 'the HLS CDN falls behind: segment upload dropped');
      return;
    }
    this.enqueue(async () => this.send('PUT', name, await readFile(file)));
  }

  putText(name: string, text: string): void {
    this.enqueue(async () => this.send('PUT', name, Buffer.from(text)));
  }

  remove(name: string): void {
    this.enqueue(async () => this.send('DELETE', name));
  }

  private enqueue(work: () => Promise<void>): void {
    if (this.closed) return;
    this.queued += 1;
    this.chain = this.chain.then(work).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn({ err: message }, 'an HLS upload to the CDN failed');
      if (!this.failing) {
        this.failing = true;
        this.events.alarm(true, `HLS uploads to ${this.base.origin} fail: ${message}`);
      }
    }).finally(() => { this.queued -= 1; });
  }

  private async send(method: 'PUT' | 'DELETE', name: string, body?: Buffer): Promise<void> {
    const ext = name.split('.').pop() ?? '';
    const response = await fetch(this.urlOf(name), {
      method,
      ...(body ? { body: new Uint8Array(body), headers: { 'content-type': CONTENT_TYPES[ext] ?? 'application/octet-stream' } } : {}),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.arrayBuffer().catch(() => undefined);
    // a DELETE of something the CDN already dropped is no failure
    if (!response.ok && !(method === 'DELETE' && response.status === 404)) throw new Error(`${method} ${name} answered ${response.status}`);
    if (body) this.events.bytesSent(body.length);
    if (this.failing) {
      this.failing = false;
      this.events.alarm(false, 'HLS uploads succeed again');
    }
  }

  /** Waits for the uploads in flight, then refuses new ones. */
  async close(): Promise<void> {
    await this.chain;
    this.closed = true;
  }
}
