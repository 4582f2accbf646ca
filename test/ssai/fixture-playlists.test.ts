// Issue 26 §2-3 through the running proxy: an origin serving the hand-written playlists of fixtures/playlists and an
// ad server that fills nothing. Media playlists come back with the same meaning (m3u8-parser before and after), broken
// ones as a 502 with its code (never another 5xx), and LL-HLS delivery directives reach the origin: a blocking reload
// stays blocking, viewers waiting for the same part share one origin request, _HLS_skip stays behind.
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestEngine } from '../helpers/engine.js';
import { parsePlaylist, type ParsedPlaylist } from '../unit/ssai/helpers/parsed-playlist.js';
import { scanMediaPlaylist } from '../../media/playlist-scanner.js';
import { INTERSTITIAL_CLASS } from '../../ssai/stitch/interstitials.js';
import { startEngineWith, variantUrls } from './setup.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/playlists');
const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.m3u8'));

/** Serves the fixtures; a request with _HLS_msn waits while `hold` is set. Records every request's path and query. */
async function fixtureOrigin() {
  const seen: string[] = [];
  const held: Array<() => void> = [];
  const state = { hold: false };
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    seen.push(url);
    if (url.startsWith('/vast')) { res.writeHead(200, { 'content-type': 'application/xml' }).end('<VAST version="4.0"/>'); return; }
    const file = path.basename(url.split('?')[0] ?? '');
    if (!files.includes(file)) { res.writeHead(404).end(); return; }
    const answer = () => res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }).end(readFileSync(path.join(FIXTURES, file)));
    if (state.hold && url.includes('_HLS_msn=')) held.push(answer); else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, state,
    release: () => { for (const f of held.splice(0)) f(); },
    heldCount: () => held.length,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

async function until(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The parsed playlist without what a guided playlist adds: the interstitial date ranges and program date-times. */
function withoutGuidedAdditions(p: ParsedPlaylist): ParsedPlaylist {
  const out: ParsedPlaylist = { ...p, dateRanges: (p.dateRanges as Array<Record<string, unknown>>).filter((r) => r.class !== INTERSTITIAL_CLASS) };
  delete out.dateTimeString;
  delete out.dateTimeObject;
  out.segments = p.segments.map(({ dateTimeString: _s, dateTimeObject: _o, programDateTime: _p, ...rest }) => rest);
  return out;
}

describe.each(['stitched', 'guided'])('hand-written playlists through the proxy, %s', (mode) => {
  const guided = mode === 'guided';
  let engine: TestEngine;
  let origin: Awaited<ReturnType<typeof fixtureOrigin>>;
  let guid: string;
  const get = async (url: string) => {
    const res = await fetch(`${engine.url}${url}`);
    return { status: res.status, text: await res.text() };
  };

  beforeAll(async () => {
    origin = await fixtureOrigin();
    engine = await startEngineWith();
    const auth = { Authorization: (await engine.login()).IdToken };
    const created = await engine.api('POST', '/broker/adinserts', {
      headers: auth, body: { name: 'fixtures', type: 'live', ad_server: `${origin.url}/vast`, source_url: `${origin.url}/pl/` },
    });
    guid = created.body.guid as string;
  }, 60_000);
  afterAll(async () => { await engine?.close(); await origin?.close(); });

  const query = guided ? '?ads.mode=guided' : '';

  it.each(files.filter((f) => !f.startsWith('broken-') && f !== 'll-master.m3u8'))('gives %s back with the same meaning', async (file) => {
    const master = await get(`/v1/master/${guid}/${file}${query}`);
    expect(master.status, master.text).toBe(200);
    const mediaUrl = variantUrls(master.text)[0]!;
    const media = await get(mediaUrl);
    expect(media.status, media.text).toBe(200);
    const originText = readFileSync(path.join(FIXTURES, file), 'utf8');
    let before = parsePlaylist(originText, `${origin.url}/pl/${file}`);
    let after = parsePlaylist(media.text, `${engine.url}${mediaUrl}`);
    if (file.startsWith('odd-')) { delete before.targetDuration; delete after.targetDuration; } // repaired (unit tests)
    if (guided) {
      // every segment dated, the origin's dates kept (the interstitials are placed by date)
      const [ours, theirs] = [scanMediaPlaylist(media.text).playlist!.segments, scanMediaPlaylist(originText).playlist!.segments];
      expect(ours.every((seg) => seg.pdtMs !== undefined)).toBe(true);
      ours.forEach((seg, i) => { if (theirs[i]!.pdtMs !== undefined) expect(seg.pdtMs).toBe(theirs[i]!.pdtMs); });
      [before, after] = [withoutGuidedAdditions(before), withoutGuidedAdditions(after)];
    }
    expect(after).toEqual(before);
  });

  it.each(['broken-not-hls.m3u8', 'broken-empty.m3u8'])('answers %s with a 502 and its code', async (file) => {
    const res = await get(`/v1/master/${guid}/${file}${query}`);
    expect(res.status).toBe(502);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'ORIGIN_NOT_HLS' });
  });

  it.each(['broken-truncated.m3u8', 'broken-garbage-numbers.m3u8'])('plays what it can of %s without a 5xx', async (file) => {
    const master = await get(`/v1/master/${guid}/${file}${query}`);
    expect(master.status).toBe(200);
    const media = await get(variantUrls(master.text)[0]!);
    expect(media.status, media.text).toBe(200);
    expect(media.text).toContain('#EXT-X-TARGETDURATION:');
  });

  it('sends delivery directives on to the origin, holds the reload while the origin holds it, and shares one request', async () => {
    const master = await get(`/v1/master/${guid}/ll-master.m3u8${query}`);
    expect(master.status, master.text).toBe(200);
    const video = variantUrls(master.text).find((u) => u.endsWith('/1.m3u8'))!;
    origin.state.hold = true;
    try {
      const before = origin.seen.length;
      let settled = 0;
      const waiting = [1, 2, 3].map(() => get(`${video}?_HLS_msn=273&_HLS_part=0&_HLS_skip=YES`).then((r) => { settled++; return r; }));
      await until('the origin to hold the blocking reload', () => origin.heldCount() === 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(0); // still blocking
      const asked = origin.seen.slice(before).filter((u) => u.includes('_HLS_'));
      expect(asked).toEqual(['/pl/ll-video.m3u8?_HLS_msn=273&_HLS_part=0']); // one request for three viewers, no skip
      origin.release();
      const replies = await Promise.all(waiting);
      for (const r of replies) {
        expect(r.status).toBe(200);
        expect(r.text).toContain(`#EXT-X-PART:DURATION=0.33334,URI="${origin.url}/pl/filePart271.0.mp4",INDEPENDENT=YES`);
        expect(r.text).not.toContain('CAN-SKIP-UNTIL');
        // Rendition reports name this session's routes of those renditions: the player's next blocking request goes
        // through us. Guided: relative, as the playlist names no viewer.
        const sessionRoute = guided ? '' : `${video.replace(/\/\d+\.m3u8$/, '')}/`;
        expect(r.text).toContain(`#EXT-X-RENDITION-REPORT:URI="${sessionRoute}2.m3u8",LAST-MSN=272,LAST-PART=2`);
        expect(r.text).toContain(`#EXT-X-RENDITION-REPORT:URI="${sessionRoute}0.m3u8",LAST-MSN=272,LAST-PART=2`);
      }
    } finally {
      origin.state.hold = false;
      origin.release();
    }
  });

  it('refuses a malformed directive with a 400 naming it', async () => {
    const master = await get(`/v1/master/${guid}/ll-master.m3u8${query}`);
    const video = variantUrls(master.text).find((u) => u.endsWith('/1.m3u8'))!;
    const res = await get(`${video}?_HLS_part=2`);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'BAD_DELIVERY_DIRECTIVE', description: expect.stringContaining('_HLS_msn') });
  });
});
