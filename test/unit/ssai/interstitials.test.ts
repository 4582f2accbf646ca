// Issue 30: the guided playlist adds interstitial date ranges (and dates where the origin has none) and changes
// nothing else; live dates stay continuous across reloads of a window without program date-times.
import { describe, expect, it } from 'vitest';
import { scanMediaPlaylist, type MediaPlaylist } from '../../../media/playlist-scanner.js';
import { findAvails } from '../../../ssai/parse/cue-finder.js';
import { checkMediaPlaylist } from '../../../ssai/check/playlist-checker.js';
import { AnnouncedBreaks, guidedMediaPlaylist, INTERSTITIAL_CLASS, interstitialBreaks, LiveDateAnchors, segmentDates, VOD_DATE_BASE_MS, type InterstitialBreak } from '../../../ssai/stitch/interstitials.js';

/** A live window of `count` segments from `first`, of varying lengths, a CUE-OUT of 8 s at sequence `cueAt`. */
function liveWindow(first: number, count: number, cueAt: number, opts: { dates: boolean }): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:3', `#EXT-X-MEDIA-SEQUENCE:${first}`];
  let ms = Date.UTC(2026, 0, 1);
  for (let s = 0; s < first; s++) ms += (s % 3 === 0 ? 2.5 : 2) * 1000;
  for (let s = first; s < first + count; s++) {
    const duration = s % 3 === 0 ? 2.5 : 2;
    if (opts.dates) lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(ms).toISOString()}`);
    if (s === cueAt) lines.push('#EXT-X-CUE-OUT:DURATION=8');
    if (s > cueAt && s < cueAt + 4) lines.push(`#EXT-X-CUE-OUT-CONT:ElapsedTime=${(s - cueAt) * 2},Duration=8`);
    if (s === cueAt + 4) lines.push('#EXT-X-CUE-IN');
    lines.push(`#EXTINF:${duration},`, `seg${s}.ts`);
    ms += duration * 1000;
  }
  return `${lines.join('\n')}\n`;
}

const scan = (text: string): MediaPlaylist => scanMediaPlaylist(text).playlist!;
const breaksOf = (pl: MediaPlaylist, firstSegmentMs?: number): InterstitialBreak[] => interstitialBreaks(pl, findAvails(pl).avails, segmentDates(pl, firstSegmentMs));
const dateRanges = (text: string): string[] => text.split('\n').filter((l) => l.includes(INTERSTITIAL_CLASS));
const added = (text: string): Set<string> => new Set(text.split('\n').filter((l) => l.includes(INTERSTITIAL_CLASS) || l.startsWith('#EXT-X-PROGRAM-DATE-TIME')));

describe('guided media playlists', () => {
  it('adds only interstitials to a dated live window, and dates every break by its first segment', () => {
    for (let first = 0; first < 30; first += 3) {
      for (const cueAt of [first - 2, first, first + 3, first + 5, first + 9]) {
        const text = liveWindow(first, 8, cueAt, { dates: true });
        const pl = scan(text);
        const out = guidedMediaPlaylist(text, pl, breaksOf(pl), { assetListUri: (id) => `assets/${id}.json` });
        // nothing but the date ranges is added, nothing removed or reordered
        expect(out.split('\n').filter((l) => !l.includes(INTERSTITIAL_CLASS))).toEqual(text.split('\n'));
        const ranges = dateRanges(out);
        // a break whose start slid out stays announced (see the next test); one ahead of the window is not listed
        const visible = cueAt >= first && cueAt < first + 8;
        if (cueAt < 0) continue;
        expect(ranges.length, `window ${first}, cue at ${cueAt}`).toBe(cueAt < first + 8 ? 1 : 0);
        if (!visible) continue;
        const start = /START-DATE="([^"]+)"/.exec(ranges[0]!)![1]!;
        expect(Date.parse(start)).toBe(pl.segments.find((s) => s.mediaSequence === cueAt)!.pdtMs);
        expect(ranges[0]).toContain('X-RESUME-OFFSET=8');
        expect(ranges[0]).toContain(`X-ASSET-LIST="assets/`);
        // named by its start date: the same break keeps its id whatever its cue's id
        expect(ranges[0]).toContain(`ID="break-${Date.parse(start)}"`);
      }
    }
  });

  it('keeps a break announced under one id from its first sight while the window lists any of it', () => {
    const announced = new AnnouncedBreaks();
    const cueAt = 20;
    const ids = new Set<string>();
    let lastSeen = -1;
    for (let first = 10; first < 40; first++) {
      const text = liveWindow(first, 8, cueAt, { dates: true });
      const pl = scan(text);
      const breaks = interstitialBreaks(pl, findAvails(pl).avails, segmentDates(pl), (ms, slot) => announced.near('s', ms, slot));
      announced.remember('s', breaks);
      for (const b of breaks) ids.add(b.id);
      if (breaks.length) lastSeen = first;
      if (first >= cueAt - 7 && first <= cueAt) expect(breaks.length, `window from ${first}`).toBe(1);
    }
    expect([...ids]).toHaveLength(1);
    // the break's last segment is 23, the CUE-IN on 24: announced while a window lists any of the break's segments
    expect(lastSeen).toBe(cueAt + 3);
  });

  it('dates a live window without dates continuously across reloads, whatever the clock says', () => {
    const anchors = new LiveDateAnchors();
    let previous: Map<number, number> | undefined;
    let clock = 1_000_000;
    for (let first = 0; first < 20; first++) {
      const text = liveWindow(first, 6, first + 4, { dates: false });
      const pl = scan(text);
      clock += 7_777; // the clock drifts from the media: dates follow the media once anchored
      const firstMs = anchors.firstSegmentMs('stream', pl, clock);
      const out = guidedMediaPlaylist(text, pl, breaksOf(pl, firstMs), { assetListUri: (id) => id, firstSegmentMs: firstMs });
      const dated = scan(out);
      const dates = new Map(dated.segments.map((s) => [s.mediaSequence, s.pdtMs!]));
      if (previous) for (const [seq, ms] of dates) if (previous.has(seq)) expect(ms, `segment ${seq}`).toBe(previous.get(seq));
      previous = dates;
      // the only lines added are one date and the interstitial
      expect(out.split('\n').filter((l) => !added(out).has(l))).toEqual(text.split('\n'));
    }
  });

  it('dates a VOD from the fixed base and inserts its breaks (resume offset 0)', () => {
    const text = `${liveWindow(0, 10, 4, { dates: false })}#EXT-X-ENDLIST\n`;
    const pl = scan(text);
    const out = guidedMediaPlaylist(text, pl, breaksOf(pl, VOD_DATE_BASE_MS), { assetListUri: (id) => id, firstSegmentMs: VOD_DATE_BASE_MS });
    const dated = scan(out);
    expect(dated.segments[0]!.pdtMs).toBe(VOD_DATE_BASE_MS);
    const [range] = dateRanges(out);
    expect(range).toContain('X-RESUME-OFFSET=0');
    expect(range).not.toContain('X-SNAP');
    expect(Date.parse(/START-DATE="([^"]+)"/.exec(range!)![1]!)).toBe(dated.segments[4]!.pdtMs);
  });

  it('writes playlists check-playlist finds no error in, and check-playlist names each broken interstitial', () => {
    for (let first = 0; first < 12; first += 4) {
      const text = liveWindow(first, 8, first + 2, { dates: true });
      const pl = scan(text);
      const out = guidedMediaPlaylist(text, pl, breaksOf(pl), { assetListUri: (id) => `assets/${id}.json` });
      expect(checkMediaPlaylist(out).filter((f) => f.severity === 'error')).toEqual([]);
    }
    const text = liveWindow(0, 8, 2, { dates: true });
    const start = new Date(Date.UTC(2026, 0, 1) + 4500).toISOString();
    const broken = text.replace('#EXTINF', [
      `#EXT-X-DATERANGE:ID="a",CLASS="${INTERSTITIAL_CLASS}",START-DATE="${start}",DURATION=4,X-ASSET-LIST="a.json"`,
      `#EXT-X-DATERANGE:ID="a",CLASS="${INTERSTITIAL_CLASS}",START-DATE="${start}",DURATION=4,X-ASSET-LIST="b.json"`,
      `#EXT-X-DATERANGE:ID="b",CLASS="${INTERSTITIAL_CLASS}",START-DATE="${start}",DURATION=4`,
      `#EXT-X-DATERANGE:ID="c",CLASS="${INTERSTITIAL_CLASS}",START-DATE="2030-01-01T00:00:00Z",DURATION=4,X-ASSET-URI="c.m3u8"`,
      `#EXT-X-DATERANGE:ID="d",CLASS="${INTERSTITIAL_CLASS}",START-DATE="2030-01-01T00:00:00Z",CUE="POST",X-ASSET-URI="d.m3u8"`,
      '#EXTINF',
    ].join('\n'));
    const rules = checkMediaPlaylist(broken).map((f) => `${f.rule}:${f.severity}`);
    expect(rules.sort()).toEqual(['INTERSTITIAL_ID_DUPLICATE:error', 'INTERSTITIAL_OUTSIDE_PLAYLIST:warning', 'INTERSTITIAL_WITHOUT_ASSET:error']);
  });
});
