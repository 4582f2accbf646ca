// Issue 19 point 4, in behaviour: a break announced ahead (a future-dated DATERANGE) is decided before it starts, so the
// playlists at the break start wait for nothing; a break whose decision misses the deadline plays the content, on time,
// and keeps it on every reload.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOUNCE_SEGMENTS, BREAK_START, CLIP_SEGMENTS, EPOCH_MS, SEGMENT_SECONDS, WINDOW_SEGMENTS } from '../../fixtures/origin-server.js';
import { checkPlaylist } from '../../ssai/check/playlist-checker.js';
import { scanMediaPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { startEngineWith, startSsai, variantUrls, type SsaiHarness } from './setup.js';
import type { TestEngine } from '../helpers/engine.js';

/**
 * What changed between two reloads that must not, by media sequence (checkReload matches segments by URI, and the
 * looped clip repeats its URIs in a window longer than a loop): a segment listed then unlisted (not slid out), or
 * listed again with another URI, discontinuity sequence or date.
 */
function reloadChanges(prev: MediaPlaylist, cur: MediaPlaylist): string[] {
  const now = new Map(cur.segments.map((s) => [s.mediaSequence, s]));
  const out = cur.mediaSequence < prev.mediaSequence ? [`media sequence ${prev.mediaSequence} then ${cur.mediaSequence}`] : [];
  for (const s of prev.segments) {
    if (s.mediaSequence < cur.mediaSequence) continue;
    const c = now.get(s.mediaSequence);
    if (!c) out.push(`${s.mediaSequence} listed, then not`);
    else if (c.uri !== s.uri || c.discontinuitySequence !== s.discontinuitySequence || c.pdtMs !== s.pdtMs) out.push(`${s.mediaSequence} changed`);
  }
  return out;
}

const metric = async (h: SsaiHarness, name: string): Promise<number> =>
  Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(`${h.engine.url}/metrics`)).text())?.[1] ?? 0);

describe('when ad decisions are made', () => {
  let engine: TestEngine;
  let h: SsaiHarness;
  beforeAll(async () => {
    engine = await startEngineWith({ decisionDeadlineMs: 300 });
    h = await startSsai({ engine, origin: { cueForm: 'daterange-ahead' } });
  }, 60_000);
  afterAll(async () => { await h?.close(); await engine?.close(); });

  async function videoOf(guid: string): Promise<string> {
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    return variantUrls(master.text).find((u) => u.endsWith('/3.m3u8'))!;
  }

  it('decides a break announced ahead in the background, before it enters the window', async () => {
    const guid = await h.configure('/vast-viewer?sid=[session.id]');
    // Warm-up: the creatives of this ladder prepared once. A viewer reloads with a break in its window: its first
    // playlist ends before the break while the decision runs (the cut), a later reload lists the ads. A decision that
    // outlasts the cut's room (a cold creative cache: the creatives are being prepared) keeps that session's break as
    // content for good, so a new viewer tries, until the creatives are ready. (A new session each reload would
    // always be a first playlist, and never see them.)
    h.origin.position = (BREAK_START + 3) * SEGMENT_SECONDS;
    let warmed = false;
    for (let viewer = 0; viewer < 30 && !warmed; viewer++) {
      const warm = await videoOf(guid);
      for (let i = 0; i < 6 && !(warmed = (await h.get(warm)).text.includes('/v1/segment/')); i++) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(warmed, 'no warm-up viewer got its ads').toBe(true);
    const url = await videoOf(guid);
    // The second loop's break is announced: the window ends two segments before it starts.
    h.origin.position = (CLIP_SEGMENTS + BREAK_START - ANNOUNCE_SEGMENTS + 2) * SEGMENT_SECONDS;
    const early = await metric(h, 'ssai_decisions_early_total');
    const asked = h.vast.requests.length;
    const before = await h.get(url);
    expect(before.text).not.toContain('/v1/segment/');
    for (let i = 0; i < 50 && (await metric(h, 'ssai_decisions_early_total')) === early; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await metric(h, 'ssai_decisions_early_total')).toBe(early + 1);
    expect(h.vast.requests.length).toBe(asked + 1);
    // The break enters the window: stitched at once, no new ad request.
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 3) * SEGMENT_SECONDS;
    const during = await h.get(url);
    const pl = scanMediaPlaylist(during.text).playlist!;
    expect(pl.segments.filter((s) => s.uri.includes('/v1/segment/')).length).toBeGreaterThan(0);
    expect(h.vast.requests.length).toBe(asked + 1);
  }, 240_000);

  it('gives every viewer its own ads in a playlist rendered from one shared stitch', async () => {
    const guid = await h.configure('/vast-viewer?sid=[session.id]');
    h.origin.position = (3 * CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const urls = [await videoOf(guid), await videoOf(guid)];
    const texts = [];
    for (const u of urls) texts.push((await h.get(u)).text);
    const sids = urls.map((u) => u.split('/')[4]!);
    texts.forEach((t, i) => {
      expect(t).toContain(`X-AD-ID="ad-a-${sids[i]}"`);
      expect(t).toContain(`X-AD-ID="ad-b-${sids[i]}"`);
      expect(t).toContain(`/v1/segment/${guid}/${sids[i]}/`);
    });
    // the same text but for the viewer's own ids
    expect(texts[1]!.replaceAll(sids[1]!, 'SID')).toBe(texts[0]!.replaceAll(sids[0]!, 'SID'));
  }, 60_000);

  it('plays the content of a break whose decision misses the deadline, on time and on every reload', async () => {
    const guid = await h.configure('/vast-viewer?sid=[session.id]&delayMs=1500');
    // The break starts two segments into the window: too early to end the playlist before it, so it is waited for.
    h.origin.position = (2 * CLIP_SEGMENTS + BREAK_START + 4) * SEGMENT_SECONDS;
    const url = await videoOf(guid);
    const late = await metric(h, 'ssai_decisions_late_total');
    const first = await h.get(url); // answered at the 300 ms deadline, not after the ad server's 1.5 s
    expect(first.status).toBe(200);
    expect(first.text).not.toContain('/v1/segment/');
    expect(await metric(h, 'ssai_decisions_late_total')).toBe(late + 1);
    await new Promise((r) => setTimeout(r, 1700)); // the decision lands meanwhile: the session keeps the content
    expect((await h.get(url)).text).toBe(first.text);
  }, 60_000);

  it('never lists as ads a break listed as content while its early decision was on its way (issue 26)', async () => {
    const guid = await h.configure('/vast-viewer?sid=[session.id]&delayMs=1500');
    // Announced: the early decision is scheduled (and takes 1.5 s at the ad server).
    h.origin.position = (4 * CLIP_SEGMENTS + BREAK_START - ANNOUNCE_SEGMENTS + 2) * SEGMENT_SECONDS;
    const url = await videoOf(guid);
    expect((await h.get(url)).text).not.toContain('/v1/segment/');
    // In the window before the decision landed (two segments in: waited for, not ended before): the playlist waits up
    // to the deadline, then keeps the content.
    h.origin.position = (4 * CLIP_SEGMENTS + BREAK_START + 5) * SEGMENT_SECONDS;
    const first = await h.get(url);
    expect(first.text).not.toContain('/v1/segment/');
    await new Promise((r) => setTimeout(r, 4000)); // the early decision lands meanwhile (due within 2 s, 1.5 s long): the listed numbers keep their content
    expect((await h.get(url)).text).toBe(first.text);
  }, 60_000);
});

describe('a break that appears at the live edge with no notice (issue 28 point 2)', () => {
  let h: SsaiHarness;
  beforeAll(async () => { h = await startSsai({ origin: { cueForm: 'cue-out' }, cutBeforeUndecidedBreaks: true }); }, 60_000);
  afterAll(async () => { await h?.close(); });

  it('answers at once ending before the break while its decision runs, then lists its ads where the content was never listed', async () => {
    const guid = await h.configure('/vast4?sid=[session.id]&delayMs=1500');
    // Warm-up: the creatives prepared once (a break at the window's start is waited for).
    h.origin.position = (BREAK_START + 6) * SEGMENT_SECONDS;
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const warm = variantUrls(master.text).find((u) => u.endsWith('/3.m3u8'))!;
    expect((await h.get(warm)).text).toContain('/v1/segment/');
    // A new viewer; the second loop's break starts at the window's last segment, three segments into the window.
    const url = variantUrls((await h.get(`/v1/master/${guid}/live/master.m3u8`)).text).find((u) => u.endsWith('/3.m3u8'))!;
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 1) * SEGMENT_SECONDS;
    const cutBefore = await metric(h, 'ssai_playlists_cut_total');
    const asked = h.vast.requests.length;
    const first = await h.get(url);
    const listed = scanMediaPlaylist(first.text).playlist!;
    // answered before the ad server (which takes 1.5 s) answered: the playlist ends before the break, nothing of it listed
    expect(await metric(h, 'ssai_playlists_cut_total')).toBe(cutBefore + 1);
    expect(listed.segments.at(-1)!.mediaSequence).toBe(CLIP_SEGMENTS + BREAK_START - 1);
    expect(first.text).not.toContain('/v1/segment/');
    expect(first.text).not.toContain('#EXT-X-ENDLIST');
    // once decided, the ads are listed from the break's start; what was listed before stays as it was
    let next = first.text;
    for (let i = 0; i < 100 && !next.includes('/v1/segment/'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      next = (await h.get(url)).text;
    }
    expect(next).toContain('/v1/segment/');
    expect(checkPlaylist(next, first.text).filter((f) => f.severity === 'error')).toEqual([]);
    const stitched = scanMediaPlaylist(next).playlist!;
    const firstAd = stitched.segments.find((s) => s.uri.includes('/v1/segment/'))!;
    expect(firstAd.mediaSequence).toBe(CLIP_SEGMENTS + BREAK_START);
    expect(stitched.segments.filter((s) => s.mediaSequence < firstAd.mediaSequence).map((s) => s.uri)).toEqual(listed.segments.map((s) => s.uri));
    expect(h.vast.requests.length).toBe(asked + 1);
  }, 240_000);

  it('holds back no more than a few target durations from a viewer joining with several undecided breaks in its window', async () => {
    const guid = await h.configure('/vast4?sid=[session.id]&delayMs=1500');
    // Warm-up: the creatives prepared once (a break at the window's start is waited for).
    h.origin.position = (BREAK_START + 6) * SEGMENT_SECONDS;
    const warm = variantUrls((await h.get(`/v1/master/${guid}/live/master.m3u8`)).text).find((u) => u.endsWith('/3.m3u8'))!;
    expect((await h.get(warm)).text).toContain('/v1/segment/');
    // A long window (40 s): the second loop's break slid half out, the third's is whole with content after it, the
    // fourth's starts at the window's last segment, with no notice. A new viewer has decided none of them.
    h.origin.windowSegments = 20;
    try {
      const master = (await h.get(`/v1/master/${guid}/live/master.m3u8`)).text;
      const video = variantUrls(master).find((u) => u.endsWith('/3.m3u8'))!;
      const audio = /^#EXT-X-MEDIA:TYPE=AUDIO,.*URI="([^"]+)"/m.exec(master)![1]!;
      let last = 3 * CLIP_SEGMENTS + BREAK_START;
      const previous = new Map<string, string>();
      const endOf = new Map<string, number>();
      let cut = 0;
      // Reloads as a player makes them, one a segment, until the no-notice break's ads are listed and beyond.
      for (let reload = 0; reload < 8; reload++) {
        h.origin.position = (last + 1) * SEGMENT_SECONDS;
        const originEndMs = EPOCH_MS + (last + 1) * SEGMENT_SECONDS * 1000;
        const cutsBefore = await metric(h, 'ssai_playlists_cut_total');
        for (const url of [video, audio]) {
          const text = (await h.get(url)).text;
          const pl = scanMediaPlaylist(text).playlist!;
          const tail = pl.segments.at(-1)!;
          const endMs = tail.pdtMs! + tail.duration * 1000;
          // A player takes the playlist's end for the live edge: ended far before the origin's (the first of the
          // window's breaks), the next reload leaps it minutes ahead, and hls.js seeks there over what it buffered.
          expect(originEndMs - endMs, `reload ${reload} of ${url} ends ${(originEndMs - endMs) / 1000} s before the origin's window:\n${text}`)
            .toBeLessThanOrEqual(3 * SEGMENT_SECONDS * 1000 + 100);
          expect(endMs, `reload ${reload} of ${url} ends before the previous one did`).toBeGreaterThanOrEqual(endOf.get(url) ?? 0);
          expect(checkPlaylist(text).filter((f) => f.severity === 'error'), `reload ${reload} of ${url}`).toEqual([]);
          const before = previous.get(url);
          if (before) expect(reloadChanges(scanMediaPlaylist(before).playlist!, pl), `reload ${reload} of ${url}:\n${text}`).toEqual([]);
          previous.set(url, text);
          endOf.set(url, endMs);
        }
        cut += (await metric(h, 'ssai_playlists_cut_total')) - cutsBefore;
        last++;
      }
      // the no-notice break at the edge did end playlists (the cut is on), and its ads came on a later reload
      expect(cut).toBeGreaterThan(0);
      expect(previous.get(video)).toContain(`/v1/segment/`);
    } finally {
      h.origin.windowSegments = WINDOW_SEGMENTS;
    }
  }, 240_000);
});
