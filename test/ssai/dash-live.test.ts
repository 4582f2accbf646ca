// Issue 33, live: a live DASH origin (ffmpeg's dash muxer, a sliding window) whose MPD carries an SCTE-35
// splice_insert in an EventStream, through the proxy. A viewer's MPD, reloaded as the window moves across the break,
// becomes multi-Period at it: the content up to the break, the viewer's ads, the content after the break with its media
// time (the break's content replaced). Period ids and starts stay put across reloads, a published Period never changes,
// publishTime follows the origin's, the break is decided once per viewer and its beacons fire once.
import { DOMParser, type Element } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASH_LIVE_MPD_PATH, DASH_LIVE_SEGMENT_SECONDS, DashLiveOrigin, windowOf, type DashLiveBreaks } from '../../fixtures/dash-live-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { childrenNamed } from '../../ssai/parse/mpd-reader.js';
import { readTestMpd, type TestMpd } from '../helpers/dash-mpd.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** One break of 10 s at 10 s of the origin's Period, its cue (2014 xml+bin) in the MPD 6 s ahead: ads a and b fill it. */
const BREAK: DashLiveBreaks = { firstAtSec: 10, everySec: 10_000, durationSec: AD_SECONDS.a + AD_SECONDS.b, announceSec: 6, scheme: 'bin' };
const BREAK_ID = 'scte-1000';
const RESUME = BREAK.firstAtSec + BREAK.durationSec;
/** The origin's window: 16 s, so that a reload once the content is back still holds the content before the break. */
const WINDOW_SECONDS = 16;

type Snapshot = { text: string; mpd: TestMpd; attrs: Record<string, string>; periods: Map<string, string>; origin: string };

const attrsOf = (el: Element): Record<string, string> => {
  const out: Record<string, string> = {};
  for (let i = 0; i < el.attributes.length; i++) { const a = el.attributes.item(i)!; out[a.name] = a.value; }
  return out;
};

/** The MPD's attributes and each Period's serialized text, by id. */
function snapshot(text: string, url: string, origin: string): Snapshot {
  const root = new DOMParser().parseFromString(text, 'text/xml').documentElement!;
  const periods = new Map(childrenNamed(root, 'Period').map((p) => [p.getAttribute('id') ?? '', p.toString()]));
  return { text, mpd: readTestMpd(text, url), attrs: attrsOf(root), periods, origin };
}

describe('live DASH with SCTE-35 EventStream cues through the proxy', () => {
  let h: SsaiHarness;
  let origin: DashLiveOrigin;
  let guid: string;
  let reloadUrl: string;
  const seen: Snapshot[] = [];
  let secondViewer = '';
  /** the ad server's requests once the first MPD was answered */
  let decidedOnFirstSight = 0;

  /** Waits for the origin's window to reach `edgeSec`, then reloads the viewer's MPD. */
  async function reloadAt(edgeSec: number): Promise<Snapshot> {
    const originMpd = await origin.waitFor((m) => (windowOf(m)?.toSec ?? 0) >= edgeSec, 90_000);
    const res = await h.get(reloadUrl);
    expect(res.status, res.text).toBe(200);
    const s = snapshot(res.text, reloadUrl, originMpd);
    seen.push(s);
    return s;
  }

  beforeAll(async () => {
    [origin, h] = await Promise.all([DashLiveOrigin.start({ windowSegments: WINDOW_SECONDS / DASH_LIVE_SEGMENT_SECONDS, breaks: BREAK }), startSsai()]);
    // vast4: ads a (6 s) and b (4 s)
    guid = await h.configure('/vast4', { type: 'broker', source: `${origin.url}/` });
    // the viewer arrives once the cue is in the origin's MPD, before the break
    const originMpd = await origin.waitFor((m) => m.includes('<Event '), 30_000);
    const url = `${h.engine.url}/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/dash+xml');
    const first = snapshot(res.text, url, originMpd);
    seen.push(first);
    decidedOnFirstSight = h.vast.requests.filter((r) => r.path === '/vast4').length;
    // the reloads come back to the viewer's session: the MPD's Location names it
    const location = /<Location>([^<]+)<\/Location>/.exec(res.text)?.[1];
    expect(location).toMatch(new RegExp(`^/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}\\?sessionId=`));
    reloadUrl = new URL(location!, url).href;
    await reloadAt(BREAK.firstAtSec + 4); // in the break
    // a second viewer arrives in the break
    const second = await h.get(url);
    expect(second.status, second.text).toBe(200);
    secondViewer = second.text;
    await reloadAt(RESUME + 2 * DASH_LIVE_SEGMENT_SECONDS); // the content back
    await reloadAt(RESUME + WINDOW_SECONDS + DASH_LIVE_SEGMENT_SECONDS); // the window past the break
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
  });

  it('stays a dynamic MPD with the origin\'s timing: availabilityStartTime, update period, time shift, publishTime advancing', () => {
    const originAttr = (s: Snapshot, name: string): string | undefined => new RegExp(`\\b${name}="([^"]+)"`).exec(s.origin)?.[1];
    let last = 0;
    for (const s of seen) {
      expect(s.attrs.type).toBe('dynamic');
      expect(s.attrs.mediaPresentationDuration).toBeUndefined();
      for (const name of ['availabilityStartTime', 'minimumUpdatePeriod', 'timeShiftBufferDepth', 'suggestedPresentationDelay']) {
        expect(s.attrs[name], name).toBe(originAttr(s, name));
      }
      const published = Date.parse(s.attrs.publishTime!);
      expect(published).toBeGreaterThan(last);
      last = published;
    }
  });

  it('publishes a break once the live edge reaches it: until then the content Period before it stays open', () => {
    for (const s of seen) {
      const content = s.mpd.periods[0]!;
      if (content.id !== 'content-0') continue;
      const video = content.sets[0]!.representations[0]!;
      const edge = video.segments.reduce((end, x) => Math.max(end, (x.t + x.d) / video.timescale), 0);
      if (edge < BREAK.firstAtSec - 0.1) {
        // (dash.js does not follow the growing window of a Period that has an end: it would stall, then skip ahead)
        expect([...s.periods.keys()]).toEqual(['content-0']);
        // (the Period's own attributes: a cue passed through in it has an Event@duration)
        expect(/<Period[^>]*>/.exec(s.periods.get('content-0')!)![0]).not.toContain('duration=');
      } else {
        expect([...s.periods.keys()].slice(0, 3)).toEqual(['content-0', `${BREAK_ID}-0`, `${BREAK_ID}-1`]);
      }
    }
    // the break was decided on its cue's first sight all the same, ahead of its place
    expect(decidedOnFirstSight).toBe(1);
  });

  it('splits the origin\'s Period at the break: the content, the viewer\'s ads, the content after the break', () => {
    const [, inBreak, after] = seen;
    expect([...inBreak!.periods.keys()].slice(0, 3)).toEqual(['content-0', `${BREAK_ID}-0`, `${BREAK_ID}-1`]);
    const periods = after!.mpd.periods;
    expect(periods.map((p) => [p.id, p.start, p.duration])).toEqual([
      ['content-0', 0, BREAK.firstAtSec],
      [`${BREAK_ID}-0`, BREAK.firstAtSec, AD_SECONDS.a],
      [`${BREAK_ID}-1`, BREAK.firstAtSec + AD_SECONDS.a, AD_SECONDS.b],
      // the last content Period is open: no duration
      [`content-${BREAK_ID}`, RESUME, 0],
    ]);
    expect(/<Period[^>]*>/.exec(after!.periods.get(`content-${BREAK_ID}`)!)![0]).not.toContain('duration=');
    // the content before the break ends at it; the content after starts at the break's end with its media time
    for (const set of periods[0]!.sets) for (const rep of set.representations) {
      const last = rep.segments[rep.segments.length - 1]!;
      expect((last.t + last.d) / rep.timescale, `${set.contentType} ${rep.id}`).toBeLessThanOrEqual(BREAK.firstAtSec + 0.1);
    }
    for (const set of periods[3]!.sets) for (const rep of set.representations) {
      expect(rep.presentationTimeOffset / rep.timescale).toBe(RESUME);
      expect(Math.abs(rep.segments[0]!.t / rep.timescale - RESUME), `${set.contentType} ${rep.id}`).toBeLessThan(0.1);
      // the origin's own segments and numbers (number n covers [2(n-1), 2n) s)
      expect(rep.segments[0]!.url).toBe(`${origin.url}/live/chunk-stream${rep.id}-${String(RESUME / 2 + 1).padStart(5, '0')}.m4s`);
    }
    // the ad Periods' segments go through the engine's segment route, and last as long as the ads
    for (const p of periods.slice(1, 3)) for (const set of p.sets) for (const rep of set.representations) {
      expect(rep.segments.every((s) => s.url.startsWith(`${h.engine.url}/v1/segment/${guid}/`)), p.id).toBe(true);
      expect(Math.abs(rep.segments.reduce((t, s) => t + s.d, 0) / rep.timescale - p.duration), `${p.id} ${rep.id}`).toBeLessThan(0.05);
    }
    // the cue is consumed
    expect(after!.text).not.toContain('EventStream');
  });

  it('never changes a published Period: ads as first published, content Periods at their start and length', () => {
    const firstOf = new Map<string, string>();
    for (const s of seen) {
      for (const [id, text] of s.periods) {
        const known = firstOf.get(id);
        if (!known) { firstOf.set(id, text); continue; }
        if (id.startsWith(`${BREAK_ID}-`)) expect(text, id).toBe(known);
        // a content Period's segments follow the window; its place does not move (an open one gets its end once)
        const head = (t: string): string => /<Period[^>]*>/.exec(t)![0].replace(/ duration="[^"]*"/, '');
        expect(head(text), id).toBe(head(known));
        if (/<Period[^>]* duration=/.test(known)) expect(/<Period[^>]*>/.exec(text)![0], id).toBe(/<Period[^>]*>/.exec(known)![0]);
        else if (/<Period[^>]* duration=/.test(text)) firstOf.set(id, text);
      }
    }
    // every reload listed each Period the earlier ones did, until the window left it behind
    const last = seen[seen.length - 1]!;
    expect([...last.periods.keys()]).toEqual([`content-${BREAK_ID}`]);
  });

  it('decides the break once per viewer: the first viewer\'s reloads ask nothing, a second viewer gets its own decision', async () => {
    const sidOf = (text: string): string => /sessionId=([^<&]+)/.exec(text)![1]!;
    expect(sidOf(secondViewer)).not.toBe(sidOf(seen[0]!.text));
    expect(secondViewer).toContain(`<Period id="${BREAK_ID}-0"`);
    expect(h.vast.requests.filter((r) => r.path === '/vast4').length).toBe(2);
    // once the break has left the window a new viewer's MPD is the content alone, and the ad server is not asked
    const third = await h.get(`/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}`);
    expect(third.status).toBe(200);
    expect(third.text).not.toContain(`id="${BREAK_ID}`);
    expect(h.vast.requests.filter((r) => r.path === '/vast4').length).toBe(2);
  });

  it('fires each ad\'s beacons once from its video segments, however often they are fetched', async () => {
    const ads = seen[2]!.mpd.periods.filter((p) => p.id.startsWith(`${BREAK_ID}-`));
    for (const round of [1, 2]) {
      for (const p of ads) for (const s of p.sets[0]!.representations[0]!.segments) {
        const got = await h.get(s.url);
        expect(got.status, `round ${round}`).toBe(302);
      }
    }
    await h.engine.ctx.services.ssai!.beacons.idle();
    for (const ad of ['a', 'b']) {
      expect(h.vast.beaconCount('impression', ad), ad).toBe(1);
      expect(h.vast.beaconCount('complete', ad), ad).toBe(1);
    }
  });
});
