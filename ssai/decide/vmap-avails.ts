// VOD avails from VMAP (issue 5 "Playback": "VOD origins (ENDLIST) take avails from cues too, and from a VMAP response
// when the ad server returns one"). Each AdBreak's timeOffset (start, end, HH:MM:SS(.mmm), n%) is placed on the nearest
// segment boundary of the ENDLIST playlist, and its ads are inserted there (issue 19 point 2, as the managed services
// do): every content segment stays and the stitched duration grows by the ads. A post-roll goes after the last segment.
import { request } from 'undici';
import type { Avail } from '../parse/cue-finder.js';
import { isVodPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { fillAdServerUrl, parseVmap, type AdDecisionRequest, type VmapBreak } from './vast-decision.js';

/** Id prefix of VMAP avails: the planner decides them from their own break's VAST. */
export const VMAP_AVAIL_PREFIX = 'vmap-';

export type VmapOffset = { kind: 'start' } | { kind: 'end' } | { kind: 'time'; seconds: number } | { kind: 'percent'; percent: number };
export type VmapAvail = Avail & { breakId: string; offset: VmapOffset };
export type VmapAvailWarning = { breakId: string; timeOffset: string; message: string };

/** Parses a VMAP 1.0 timeOffset; undefined for positions (#n) and anything malformed. */
export function parseTimeOffset(raw: string): VmapOffset | undefined {
  const v = raw.trim();
  if (/^start$/i.test(v)) return { kind: 'start' };
  if (/^end$/i.test(v)) return { kind: 'end' };
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(v);
  if (pct) {
    const percent = Number(pct[1]);
    return percent <= 100 ? { kind: 'percent', percent } : undefined;
  }
  const t = /^(\d+):([0-5]?\d):([0-5]?\d(?:\.\d{1,3})?)$/.exec(v);
  if (t) return { kind: 'time', seconds: Number(t[1]) * 3600 + Number(t[2]) * 60 + Number(t[3]) };
  return undefined;
}

/** The offset in seconds into content lasting `total` seconds ('end' is `total`). */
export function offsetSeconds(offset: VmapOffset, total: number): number {
  switch (offset.kind) {
    case 'start': return 0;
    case 'end': return total;
    case 'time': return offset.seconds;
    case 'percent': return (total * offset.percent) / 100;
  }
}

function nominal(pl: MediaPlaylist): number {
  const ds = pl.segments.map((s) => s.duration).sort((a, b) => a - b);
  return ds[Math.floor(ds.length / 2)] ?? pl.targetDuration ?? 6;
}

/**
 * The avails of an ENDLIST playlist from VMAP breaks, in time order, one per segment boundary (the end of the content
 * is the post-roll's boundary). Each is an insertion: endSegmentIndex = startSegmentIndex, no content replaced; its
 * duration is 0 until the planner knows the ads.
 */
export function availsFromVmap(pl: MediaPlaylist, breaks: readonly VmapBreak[]): { avails: VmapAvail[]; warnings: VmapAvailWarning[] } {
  const warnings: VmapAvailWarning[] = [];
  const avails: VmapAvail[] = [];
  if (!isVodPlaylist(pl) || !pl.segments.length) return { avails, warnings };
  const starts: number[] = [];
  let total = 0;
  for (const s of pl.segments) { starts.push(total); total += s.duration; }
  const slot = nominal(pl);
  const taken = new Set<number>();
  breaks.forEach((b, i) => {
    const breakId = b.breakId || String(i);
    const warn = (message: string) => warnings.push({ breakId, timeOffset: b.timeOffset, message });
    const offset = parseTimeOffset(b.timeOffset);
    if (!offset) { warn('timeOffset is not start, end, HH:MM:SS(.mmm) or n%'); return; }
    const at = offsetSeconds(offset, total);
    if (at > total + slot / 2) { warn('after the end of the content'); return; }
    // nearest segment boundary; the end of the content (index = segment count) is the post-roll's
    const bounds = [...starts, total];
    let index = 0;
    for (let k = 1; k < bounds.length; k++) if (Math.abs(bounds[k]! - at) < Math.abs(bounds[index]! - at)) index = k;
    if (offset.kind === 'end') index = starts.length;
    if (taken.has(index)) { warn(`another break already starts at segment ${index}`); return; }
    taken.add(index);
    const seg = pl.segments[index];
    const last = pl.segments[pl.segments.length - 1]!;
    const sequence = seg ? seg.mediaSequence : last.mediaSequence + 1;
    const avail: VmapAvail = {
      id: `${VMAP_AVAIL_PREFIX}${breakId}`, breakId, offset,
      startSegmentIndex: sequence, endSegmentIndex: sequence, startVisible: true,
      // VMAP gives no break length: the break lasts as long as its ads (set by the planner)
      duration: 0, durationFromCue: false, open: false,
      // VMAP has no cue tag: the kind names the closest cue semantics (a CUE-OUT without a duration)
      kind: 'cue-out', slotDuration: slot, insert: true, contentOffsetSeconds: Math.round(bounds[index]! * 1000) / 1000,
    };
    const pdt = seg ? seg.pdtMs : last.pdtMs !== undefined ? last.pdtMs + last.duration * 1000 : undefined;
    if (pdt !== undefined) avail.startPdtMs = pdt;
    avails.push(avail);
  });
  avails.sort((a, b) => a.startSegmentIndex - b.startSegmentIndex);
  return { avails, warnings };
}

export type VmapFetchResult = { ok: true; breaks: VmapBreak[] } | { ok: false; reason: 'not-vmap' | 'error'; message: string };

/** Asks the ad server once for a session's VOD playlist and keeps its VMAP breaks (not-vmap when it answers VAST). */
export async function fetchVmapBreaks(adServerUrl: string, req: Omit<AdDecisionRequest, 'adServerUrl'>, opts: { timeoutMs?: number; maxBytes?: number } = {}): Promise<VmapFetchResult> {
  const timeoutMs = opts.timeoutMs ?? 3000;
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  const url = fillAdServerUrl(adServerUrl, req);
  try {
    const res = await request(url, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
    if (res.statusCode !== 200) { await res.body.dump(); return { ok: false, reason: 'error', message: `ad server answered ${res.statusCode}` }; }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of res.body) {
      size += (c as Buffer).length;
      if (size > maxBytes) { res.body.destroy(); return { ok: false, reason: 'error', message: `response larger than ${maxBytes} bytes` }; }
      chunks.push(c as Buffer);
    }
    const breaks = parseVmap(Buffer.concat(chunks).toString('utf8'));
    return breaks ? { ok: true, breaks } : { ok: false, reason: 'not-vmap', message: 'the ad server answered something other than VMAP' };
  } catch (e) {
    return { ok: false, reason: 'error', message: e instanceof Error ? e.message : String(e) };
  }
}
