import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../fixtures/generate-media.js';
import { BREAK_SECONDS, BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { startSsai, variantUrls, type SsaiHarness } from './setup.js';

/** The stitched entries that go through /v1/segment and their total duration. */
function adSpan(playlist: string): { count: number; seconds: number } {
  const lines = playlist.split('\n');
  let count = 0;
  let seconds = 0;
  lines.forEach((line, index) => {
    if (!line.startsWith('/v1/segment/')) return;
    count += 1;
    const extinf = /^#EXTINF:([\d.]+)/.exec(lines[index - 1] ?? '') ?? /^#EXTINF:([\d.]+)/.exec(lines.slice(0, index).reverse().find((l) => l.startsWith('#EXTINF')) ?? '');
    seconds += Number(extinf?.[1] ?? 0);
  });
  return { count, seconds };
}

function videoVariant(master: string): string {
  const url = variantUrls(master).find((u) => !master.includes(`URI="${u}"`));
  if (!url) throw new Error('no video variant in the master');
  return url;
}

describe('VMAP avails and slate through the proxy', () => {
  let h: SsaiHarness;
  let imageServer: http.Server;
  let imageUrl: string;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'none' } });
    const png = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'engine-slate-')), 'slate.png');
    await generateMedia('image', png);
    imageServer = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(fs.readFileSync(png));
    });
    await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
    imageUrl = `http://127.0.0.1:${(imageServer.address() as AddressInfo).port}/slate.png`;
  });
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((resolve) => imageServer?.close(() => resolve()));
  });

  it('places the ads of a VMAP response in a VOD origin that carries no cues', async () => {
    const guid = await h.configure('/vmap', { type: 'broker' });
    const master = await h.get(`/v1/master/${guid}/vod/master.m3u8`);
    expect(master.status).toBe(200);
    const media = await h.get(videoVariant(master.text));
    expect(media.status).toBe(200);
    expect(media.text).toContain('#EXT-X-ENDLIST');
    expect(adSpan(media.text).count).toBeGreaterThan(0);
    expect(media.text).toContain('CLASS="com.engine.ad"');
  });

  it('fills the part of a break the ads leave with the configuration slate, so the break keeps its length', async () => {
    h.origin.cueForm = 'cue-out';
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: { name: 'slate', type: 'live', ad_server: `${h.vast.url}/vast3`, source_url: `${h.origin.url}/`, slate_ad: imageUrl },
    });
    expect(created.status).toBe(200);
    const master = await h.get(`/v1/master/${created.body.guid}/live/master.m3u8`);
    const media = await h.get(videoVariant(master.text));
    const span = adSpan(media.text);
    // /vast3 answers one ad shorter than the break: the rest is slate.
    expect(AD_SECONDS.a).toBeLessThan(BREAK_SECONDS);
    expect(span.seconds).toBeCloseTo(BREAK_SECONDS, 0);
    // One DATERANGE for the ad, none for the slate (slate is not an ad and fires no beacons).
    expect(media.text.match(/CLASS="com\.engine\.ad"/g)).toHaveLength(1);
  });
});
