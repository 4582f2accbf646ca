// The media store's route while a re-encode removes an older version: every reply is whole or a 404, never a reset.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaMount } from '../../../src/media/media.mount.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'media-mount-'));
const body = Buffer.alloc(2 * 1024 * 1024, 7);
let server: ReturnType<express.Express['listen']>;
let base: string;

beforeAll(async () => {
  const app = express();
  mediaMount(dir)(app);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('media mount', () => {
  it('answers a file removed while it is asked for with the whole file or a 404', async () => {
    const version = path.join(dir, 'vod', 'g', 'v1');
    const outcomes = { whole: 0, missing: 0 };
    for (let round = 0; round < 40; round++) {
      mkdirSync(version, { recursive: true });
      writeFileSync(path.join(version, 'seg.ts'), body);
      // The removal runs beside the requests, as the worker's clean-up runs beside viewers.
      const removal = rm(version, { recursive: true, force: true });
      const replies = await Promise.all(Array.from({ length: 4 }, async () => {
        const res = await fetch(`${base}/media/vod/g/v1/seg.ts`);
        return { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
      }));
      await removal;
      for (const reply of replies) {
        if (reply.status === 200) {
          expect(reply.bytes).toBe(body.length);
          outcomes.whole++;
        } else {
          expect(reply.status).toBe(404);
          outcomes.missing++;
        }
      }
    }
    expect(outcomes.whole + outcomes.missing).toBe(160);
  });

  it('closes what it opened for a HEAD and a 304', async () => {
    mkdirSync(path.join(dir, 'keep'), { recursive: true });
    writeFileSync(path.join(dir, 'keep', 'a.m3u8'), '#EXTM3U\n');
    const before = await openFiles();
    let etag = '';
    for (let i = 0; i < 50; i++) {
      const head = await fetch(`${base}/media/keep/a.m3u8`, { method: 'HEAD' });
      etag = head.headers.get('etag') ?? '';
      expect((await fetch(`${base}/media/keep/a.m3u8`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    }
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(await openFiles()).toBeLessThan(before + 10);
  });
});

/** Descriptors this process holds (Linux). */
async function openFiles(): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  return (await readdir('/proc/self/fd')).length;
}
