// `engine check-playlist URL`: fetches a playlist (every media playlist of a multivariant one), reloads live ones
// `reloads` times at their target duration, and reports what RFC 8216 forbids (ssai/playlist-checker.ts). A DASH MPD
// (the body starts with `<?xml` or `<MPD`) is checked by ssai/check/mpd-checker.ts, and its segments' availability
// here: the init, first and last media segment of each Representation of each Period (issue 33).
import { request } from 'undici';
import { probeSegment, type SegmentStreams } from '../../media/media-probe.js';
import { checkPlaylist } from './playlist-checker.js';
import { checkMpd, isMpdText, mpdSegmentProbes, type MpdProbe } from './mpd-checker.js';
import { isVodPlaylist, playlistKind, resolveUri, scanMediaPlaylist, scanMultivariantPlaylist, type MediaSegment } from '../../media/playlist-scanner.js';

export type CheckFinding = { rule: string; severity: 'error' | 'warning'; message: string };

async function fetchText(url: string): Promise<{ text: string } | { error: string }> {
  try {
    const res = await request(url, { signal: AbortSignal.timeout(5000) });
    const text = await res.body.text();
    if (res.statusCode >= 400) return { error: `HTTP ${res.statusCode}` };
    return { text };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

export type CheckOptions = {
  sleep?: (ms: number) => Promise<void>;
  /** reads a segment's streams (default ffprobe); false: no segment is fetched (an MPD's availability neither) */
  probe?: ((uri: string, mapUri?: string) => Promise<SegmentStreams | undefined>) | false;
};

/** Spans between discontinuities probed per muxed rendition: enough for a window with a few breaks. */
const MAX_PROBED_SPANS = 12;

/**
 * A muxed rendition (audio in every segment) whose spans between discontinuities (content, each ad) do not all carry
 * audio: the ad was stitched without its audio, viewers hear silence and the audio timeline shifts (issue 19 point 1).
 */
async function audioFindings(url: string, text: string, probe: NonNullable<Exclude<CheckOptions['probe'], false>>): Promise<CheckFinding[]> {
  const pl = scanMediaPlaylist(text).playlist;
  if (!pl) return [];
  const spans: MediaSegment[] = [];
  for (const s of pl.segments) if (!spans.length || s.discontinuity) spans.push(s);
  const probed = await Promise.all(spans.slice(0, MAX_PROBED_SPANS).map(async (s) => ({
    s, streams: await probe(resolveUri(url, s.uri), s.map ? resolveUri(url, s.map.uri) : undefined),
  })));
  if (!probed.some((p) => p.streams?.audio)) return []; // video-only content: nothing to compare
  return probed.filter((p) => p.streams && !p.streams.audio).map((p) => ({
    rule: 'SEGMENT_WITHOUT_AUDIO', severity: 'error' as const,
    message: `${url}: ${p.s.uri} carries no audio where the rest of this muxed rendition does (the ad lost its audio)`,
  }));
}

/** Segments fetched at once when checking an MPD's availability. */
const PROBES_AT_ONCE = 8;

/**
 * Whether a segment answers: HEAD, following redirects (an ad segment's route answers 302 to the media store), GET
 * where a server refuses HEAD. HEAD first: the proxy's segment route fires no beacon for it.
 */
async function availability(url: string): Promise<string | undefined> {
  let at = url;
  for (let hops = 0; hops < 5; hops++) {
    try {
      let res = await request(at, { method: 'HEAD', signal: AbortSignal.timeout(5000) });
      await res.body.dump();
      if (res.statusCode === 405 || res.statusCode === 501) {
        res = await request(at, { method: 'GET', signal: AbortSignal.timeout(5000) });
        await res.body.dump();
      }
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') { at = new URL(location, at).href; continue; }
      return res.statusCode >= 400 ? `HTTP ${res.statusCode}${at !== url ? ` at ${at}` : ''}` : undefined;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }
  return 'more than 5 redirects';
}

/** An MPD's findings: the checker's, then each unavailable segment (a URL shared by Periods is fetched once). */
async function checkMpdUrl(url: string, text: string, fetchSegments: boolean): Promise<CheckFinding[]> {
  const findings: CheckFinding[] = checkMpd(text).map((f) => ({ rule: f.rule, severity: f.severity, message: `${url}: ${f.message}` }));
  if (!fetchSegments || findings.some((f) => f.rule === 'NOT_MPD')) return findings;
  const probes = mpdSegmentProbes(text, url);
  const answers = new Map<string, Promise<string | undefined>>();
  const queue = [...new Set(probes.map((p) => p.url))];
  const workers = Array.from({ length: Math.min(PROBES_AT_ONCE, queue.length) }, async () => {
    for (let u = queue.shift(); u !== undefined; u = queue.shift()) {
      const answer = availability(u);
      answers.set(u, answer);
      await answer;
    }
  });
  await Promise.all(workers);
  const what = (p: MpdProbe): string => (p.what === 'init' ? 'init segment' : p.what === 'file' ? 'file' : `${p.what} media segment`);
  for (const p of probes) {
    const error = await answers.get(p.url);
    if (error) findings.push({ rule: 'MPD_SEGMENT_UNAVAILABLE', severity: 'error', message: `${url}: the ${what(p)} of Representation "${p.representation}" of Period "${p.period}" (${p.url}): ${error}` });
  }
  return findings;
}

export async function checkPlaylistUrl(url: string, reloads: number, opts: CheckOptions = {}): Promise<CheckFinding[]> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const first = await fetchText(url);
  if ('error' in first) return [{ rule: 'FETCH_FAILED', severity: 'error', message: `${url}: ${first.error}` }];
  if (isMpdText(first.text)) return checkMpdUrl(url, first.text, opts.probe !== false);
  if (!playlistKind(first.text)) return [{ rule: 'NOT_HLS', severity: 'error', message: `${url}: the body does not start with #EXTM3U or <?xml / <MPD` }];
  let media: Array<{ url: string; text: string; muxed: boolean }> = [{ url, text: first.text, muxed: true }];
  if (playlistKind(first.text) === 'multivariant') {
    const mv = scanMultivariantPlaylist(first.text).playlist;
    // A variant is muxed unless its AUDIO group has renditions with their own playlists.
    const demuxedGroups = new Set((mv?.renditions ?? []).filter((r) => r.type === 'AUDIO' && r.uri).map((r) => r.groupId));
    const muxed = new Set((mv?.variants ?? []).filter((v) => !demuxedGroups.has(v.attrs.AUDIO ?? '\u0000')).map((v) => v.uri));
    const uris = [...new Set([...(mv?.variants ?? []).map((v) => v.uri), ...(mv?.renditions ?? []).flatMap((r) => (r.uri ? [r.uri] : []))])];
    media = [];
    for (const u of uris) {
      const abs = resolveUri(url, u);
      const got = await fetchText(abs);
      if ('error' in got) return [{ rule: 'FETCH_FAILED', severity: 'error', message: `${abs}: ${got.error}` }];
      media.push({ url: abs, text: got.text, muxed: muxed.has(u) });
    }
  }
  const findings: CheckFinding[] = [];
  const add = (u: string, list: ReturnType<typeof checkPlaylist>) => {
    for (const f of list) findings.push({ rule: f.rule, severity: f.severity, message: `${u}${f.line ? `:${f.line}` : ''}: ${f.message}` });
  };
  for (const m of media) add(m.url, checkPlaylist(m.text));
  const probe = opts.probe === undefined ? probeSegment : opts.probe;
  if (probe) for (const m of media) if (m.muxed) findings.push(...await audioFindings(m.url, m.text, probe));
  const live = media.filter((m) => { const pl = scanMediaPlaylist(m.text).playlist; return !pl || !isVodPlaylist(pl); });
  for (let i = 0; i < reloads && live.length; i++) {
    const target = scanMediaPlaylist(live[0]!.text).playlist?.targetDuration || 2;
    await sleep(target * 1000);
    for (const m of live) {
      const got = await fetchText(m.url);
      if ('error' in got) { findings.push({ rule: 'FETCH_FAILED', severity: 'error', message: `${m.url}: ${got.error}` }); continue; }
      add(m.url, checkPlaylist(got.text, m.text));
      m.text = got.text;
    }
  }
  return findings;
}
