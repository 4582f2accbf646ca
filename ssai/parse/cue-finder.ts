// Finds ad avails in a scanned media playlist from every common cue form (issue 5 "Media playlists").
// Ids stay stable across reloads of a sliding window so a session keeps its ad decision per avail.
import type { MediaPlaylist, MediaSegment, RawTag } from '../../media/playlist-scanner.js';
import { isVodPlaylist, parseAttributes } from '../../media/playlist-scanner.js';
import { cueDirection, cueDurationSeconds, cueEventId, decodeScte35, type SpliceInfo } from '../../media/scte35.js';

export type CueKind = 'cue-out' | 'cue-out-cont' | 'daterange' | 'oatcls' | 'splicepoint' | 'scte35-tag';

export type Avail = {
  /** stable id: scte-<splice/segmentation event id>, dr-<DATERANGE ID>, pdt-<epoch s of break start> or seq-<media sequence> */
  id: string;
  /** media sequence number of the first content segment of the break (estimated when it slid out) */
  startSegmentIndex: number;
  /** false when the cue-out already slid out of the window (found from CUE-OUT-CONT / DATERANGE dates) */
  startVisible: boolean;
  /** media sequence of the first content segment after the break; undefined while the break is open */
  endSegmentIndex?: number;
  /** planned break length in seconds (from the cue); when no cue gives one, the content seen so far */
  duration: number;
  durationFromCue: boolean;
  /** no CUE-IN seen and the planned duration not yet covered by visible segments */
  open: boolean;
  kind: CueKind;
  /** epoch ms of the break start when program-date-time or START-DATE give it */
  startPdtMs?: number;
  scte35?: SpliceInfo;
  /** nominal content segment length used to place ad segments deterministically (see manifest-rewriter) */
  slotDuration: number;
  /**
   * VOD only (issue 19 point 2): the ads are inserted before segment startSegmentIndex (one past the last segment: a
   * post-roll) and no content is replaced; endSegmentIndex equals startSegmentIndex.
   */
  insert?: boolean;
  /** VOD: seconds of content before the break's start */
  contentOffsetSeconds?: number;
};

/** Why a cue was ignored (the `reason` of ssai_cue_errors_total, issue 19 point 3). */
export type CueErrorReason = 'bad_duration' | 'bad_elapsed' | 'bad_date' | 'missing_id' | 'bad_scte35' | 'out_of_window';
export type CueWarning = { line: number; message: string; reason: CueErrorReason };

type CueEvent = {
  dir: 'out' | 'in' | 'cont';
  kind: CueKind;
  duration?: number;
  elapsed?: number;
  id?: string;
  scte35?: SpliceInfo;
  startMs?: number;
};

// Seconds of slack when deciding that visible content covers the planned duration (encoders round segment lengths).
const END_TOLERANCE = 0.5;
/** No ad break lasts longer: a longer (or negative, or unreadable) duration or elapsed time is a malformed cue. */
const MAX_BREAK_SECONDS = 7200;

/** Thrown inside eventOf only: the tag is a malformed cue, ignored and counted. */
class BadCue {
  constructor(readonly reason: CueErrorReason, readonly message: string) {}
}

/** A decimal number of seconds in [0, MAX_BREAK_SECONDS]; undefined when absent; a BadCue otherwise. */
function seconds(s: string | undefined, reason: 'bad_duration' | 'bad_elapsed', what: string): number | undefined {
  if (s === undefined || s.trim() === '') return undefined;
  const v = s.trim();
  const n = /^\d+(\.\d+)?$/.test(v) ? Number(v) : Number.NaN;
  if (!(n >= 0 && n <= MAX_BREAK_SECONDS)) throw new BadCue(reason, `${what} "${v.slice(0, 40)}" is not a number of seconds in [0, ${MAX_BREAK_SECONDS}]`);
  return n;
}

function decoded(b64: string | undefined, warnings: CueWarning[], line: number): SpliceInfo | undefined {
  if (!b64) return undefined;
  const r = decodeScte35(b64);
  if (r.ok) return r.value;
  warnings.push({ line, message: `${r.error.code}: ${r.error.message}`, reason: 'bad_scte35' });
  return undefined;
}

function fromScte(kind: CueKind, info: SpliceInfo | undefined, extra: Partial<CueEvent> = {}): CueEvent | undefined {
  if (!info) return undefined;
  const dir = extra.dir ?? cueDirection(info);
  if (!dir) return undefined;
  const ev: CueEvent = { dir, kind, scte35: info, ...extra };
  const d = extra.duration ?? cueDurationSeconds(info);
  if (d !== undefined && !(d >= 0 && d <= MAX_BREAK_SECONDS)) throw new BadCue('bad_duration', `SCTE-35 break duration ${d} s`);
  if (d !== undefined) ev.duration = d;
  const id = cueEventId(info);
  if (ev.id === undefined && id !== undefined) ev.id = `scte-${id}`;
  return ev;
}

/**
 * The tags parseCue reads, but for EXT-X-DATERANGE (a cue only with an SCTE35-OUT/-IN/-CMD attribute): a name added to
 * its switch belongs here too, so that ad_marker_passthrough false removes every cue form read (issue 31 item 5).
 */
export const CUE_TAG_NAMES: ReadonlySet<string> = new Set(['EXT-X-CUE-OUT', 'EXT-X-CUE-OUT-CONT', 'EXT-X-CUE-IN',
  'EXT-OATCLS-SCTE35', 'EXT-X-SPLICEPOINT-SCTE35', 'EXT-X-SCTE35']);

/** Whether a tag is an ad marker of a form the cue finder reads (a malformed one too): a cue tag or an SCTE-35 DATERANGE. */
export function isCueTag(tag: RawTag): boolean {
  if (CUE_TAG_NAMES.has(tag.name)) return true;
  if (tag.name !== 'EXT-X-DATERANGE' || !tag.value.includes('SCTE35-')) return false;
  const a = parseAttributes(tag.value);
  return a['SCTE35-OUT'] !== undefined || a['SCTE35-IN'] !== undefined || a['SCTE35-CMD'] !== undefined;
}

/** Translates one tag into a cue event; undefined when the tag is not a cue, or is a malformed one (then in warnings). */
function eventOf(tag: RawTag, warnings: CueWarning[]): CueEvent | undefined {
  try {
    return parseCue(tag, warnings);
  } catch (e) {
    if (!(e instanceof BadCue)) throw e;
    warnings.push({ line: tag.line, message: `${tag.name}: ${e.message}`, reason: e.reason });
    return undefined;
  }
}

function parseCue(tag: RawTag, warnings: CueWarning[]): CueEvent | undefined {
  switch (tag.name) {
    case 'EXT-X-CUE-OUT': {
      const v = tag.value;
      const d = seconds(v.includes('=') ? parseAttributes(v).DURATION : v, 'bad_duration', 'duration');
      return d === undefined ? { dir: 'out', kind: 'cue-out' } : { dir: 'out', kind: 'cue-out', duration: d };
    }
    case 'EXT-X-CUE-OUT-CONT': {
      const v = tag.value;
      if (v.includes('=')) {
        const a = parseAttributes(v);
        const e = seconds(a.ElapsedTime, 'bad_elapsed', 'ElapsedTime'), d = seconds(a.Duration, 'bad_duration', 'Duration');
        const info = decoded(a.SCTE35, warnings, tag.line);
        const ev: CueEvent = { dir: 'cont', kind: 'cue-out-cont' };
        if (e !== undefined) ev.elapsed = e;
        if (d !== undefined) ev.duration = d;
        const id = info && cueEventId(info);
        if (id !== undefined) ev.id = `scte-${id}`;
        if (info) ev.scte35 = info;
        return ev;
      }
      const [es, ds] = v.split('/'); // "elapsed/duration" form
      const e = seconds(es, 'bad_elapsed', 'elapsed'), d = seconds(ds, 'bad_duration', 'duration');
      return { dir: 'cont', kind: 'cue-out-cont', ...(e !== undefined ? { elapsed: e } : {}), ...(d !== undefined ? { duration: d } : {}) };
    }
    case 'EXT-X-CUE-IN':
      return { dir: 'in', kind: 'cue-out' };
    case 'EXT-X-DATERANGE': {
      const a = parseAttributes(tag.value);
      const cue = a['SCTE35-OUT'] !== undefined || a['SCTE35-IN'] !== undefined || a['SCTE35-CMD'] !== undefined;
      if (!cue) return undefined;
      // RFC 8216 §4.3.2.7: ID and START-DATE are required; a cue without them cannot be told apart or placed.
      if (!a.ID) throw new BadCue('missing_id', 'an SCTE-35 DATERANGE without ID');
      const start = a['START-DATE'] ? Date.parse(a['START-DATE']) : NaN;
      if (Number.isNaN(start)) throw new BadCue('bad_date', `START-DATE "${(a['START-DATE'] ?? '').slice(0, 40)}" is not a date`);
      const extra: Partial<CueEvent> = { id: `dr-${a.ID}`, startMs: start };
      const d = seconds(a.DURATION, 'bad_duration', 'DURATION') ?? seconds(a['PLANNED-DURATION'], 'bad_duration', 'PLANNED-DURATION');
      if (d !== undefined) extra.duration = d;
      if (a['SCTE35-OUT']) {
        // The splice event id names the break in every form (DATERANGE, CUE-OUT-CONT, OATCLS): a break announced
        // ahead keeps the id it is decided under when its CUE-OUT appears, so the early decision is the one used.
        const info = decoded(a['SCTE35-OUT'], warnings, tag.line);
        const eventId = info && cueEventId(info);
        const named = eventId === undefined ? extra : { ...extra, id: `scte-${eventId}` };
        return fromScte('daterange', info, { ...named, dir: 'out' }) ?? { ...named, dir: 'out', kind: 'daterange' };
      }
      if (a['SCTE35-IN']) return { ...extra, dir: 'in', kind: 'daterange' };
      if (a['SCTE35-CMD']) return fromScte('daterange', decoded(a['SCTE35-CMD'], warnings, tag.line), extra);
      return undefined;
    }
    case 'EXT-OATCLS-SCTE35':
      return fromScte('oatcls', decoded(tag.value, warnings, tag.line));
    case 'EXT-X-SPLICEPOINT-SCTE35':
      return fromScte('splicepoint', decoded(tag.value, warnings, tag.line));
    case 'EXT-X-SCTE35': {
      const a = parseAttributes(tag.value);
      const d = seconds(a.DURATION, 'bad_duration', 'DURATION');
      const e = seconds(a.ELAPSED, 'bad_elapsed', 'ELAPSED');
      const info = decoded(a.CUE, warnings, tag.line);
      const extra: Partial<CueEvent> = {};
      if (a.ID) extra.id = `scte-${a.ID}`;
      if (d !== undefined) extra.duration = d;
      if (e !== undefined) extra.elapsed = e;
      if (a['CUE-OUT'] === 'YES') extra.dir = 'out';
      else if (a['CUE-OUT'] === 'CONT') extra.dir = 'cont';
      else if (a['CUE-IN'] === 'YES') extra.dir = 'in';
      if (info) return fromScte('scte35-tag', info, extra);
      return extra.dir ? ({ kind: 'scte35-tag', ...extra } as CueEvent) : undefined;
    }
    default:
      return undefined;
  }
}

/** Median segment duration, rounded to ms: the avail's slot length for deterministic ad placement. */
function nominalDuration(pl: MediaPlaylist): number {
  const ds = pl.segments.map((s) => s.duration).sort((a, b) => a - b);
  const mid = ds[Math.floor(ds.length / 2)];
  return Math.round((mid ?? (pl.targetDuration || 6)) * 1000) / 1000;
}

type Building = Avail & { elapsed: number };

/** Finds the avails of a media playlist, oldest first. Undecodable SCTE-35 payloads become warnings, not errors. */
export function findAvails(pl: MediaPlaylist): { avails: Avail[]; warnings: CueWarning[] } {
  const warnings: CueWarning[] = [];
  const avails: Building[] = [];
  const slot = nominalDuration(pl);
  let open: Building | undefined;
  /** breaks announced ahead whose start the scan has not reached */
  const ahead: Building[] = [];
  const segs = pl.segments;
  const close = (b: Building, end: number): void => { b.endSegmentIndex = end; b.open = false; open = undefined; };

  const startAt = (seg: MediaSegment | undefined, seq: number, ev: CueEvent): Building => {
    const b: Building = {
      id: ev.id ?? '', startSegmentIndex: seq, startVisible: true, duration: ev.duration ?? 0,
      durationFromCue: ev.duration !== undefined, open: true, kind: ev.kind, slotDuration: slot, elapsed: 0,
    };
    if (ev.scte35) b.scte35 = ev.scte35;
    const pdt = ev.startMs ?? seg?.pdtMs;
    if (pdt !== undefined) b.startPdtMs = pdt;
    return b;
  };

  // Several cues of one break (CUE-OUT + OATCLS, CUE-OUT + CONT …) enrich it; the SCTE-35 event id is the strongest id.
  const enrich = (b: Avail, ev: CueEvent): void => {
    if (!b.durationFromCue && ev.duration !== undefined) { b.duration = ev.duration; b.durationFromCue = true; }
    if (!b.scte35 && ev.scte35) b.scte35 = ev.scte35;
    if (ev.id && (!b.id || (ev.id.startsWith('scte-') && !b.id.startsWith('scte-')))) b.id = ev.id;
  };

  const handle = (ev: CueEvent, seg: MediaSegment | undefined, seq: number): void => {
    if (ev.dir === 'out') {
      // A DATERANGE can name a START-DATE earlier than the segment it precedes: locate the start by PDT.
      let startSeq = seq;
      let visible = true;
      if (ev.startMs !== undefined && segs[0]?.pdtMs !== undefined) {
        const last = segs[segs.length - 1]!;
        const windowEnd = last.pdtMs === undefined ? undefined : last.pdtMs + last.duration * 1000;
        // A break that started or starts hours away from the window is a malformed date, not a break to place.
        if (ev.startMs < segs[0].pdtMs - MAX_BREAK_SECONDS * 1000 || (windowEnd !== undefined && ev.startMs > windowEnd + MAX_BREAK_SECONDS * 1000)) {
          warnings.push({ line: seg?.line ?? 0, message: `break start ${new Date(ev.startMs).toISOString()} is over ${MAX_BREAK_SECONDS} s away from the window`, reason: 'out_of_window' });
          return;
        }
        const hit = segs.find((s) => s.pdtMs !== undefined && s.pdtMs + 1 >= ev.startMs!);
        if (hit) startSeq = hit.mediaSequence;
        // Announced ahead (a future START-DATE): placed past the window's end, decided now, stitched when it comes.
        else if (windowEnd !== undefined && ev.startMs >= windowEnd - 1) startSeq = last.mediaSequence + 1 + Math.round((ev.startMs - windowEnd) / 1000 / slot);
        if (ev.startMs < segs[0].pdtMs - 1) {
          visible = false;
          startSeq = segs[0].mediaSequence - Math.round((segs[0].pdtMs - ev.startMs) / 1000 / slot);
        }
      }
      if (startSeq < 0) {
        warnings.push({ line: seg?.line ?? 0, message: 'the break would start before media sequence 0', reason: 'out_of_window' });
        return;
      }
      if (open && (open.startSegmentIndex === startSeq || (ev.id !== undefined && ev.id === open.id))) {
        // Several forms for the same break (CUE-OUT + OATCLS...): enrich, keep the strongest id.
        enrich(open, ev);
        return;
      }
      const announcedAs = ahead.find((a) => a.startSegmentIndex === startSeq || (ev.id !== undefined && a.id === ev.id));
      if (announcedAs) { enrich(announcedAs, ev); return; } // a break announced ahead, announced again
      if (avails.some((a) => ev.id !== undefined && a.id === ev.id)) return; // repeated DATERANGE of a closed break
      if (startSeq > seq) {
        // Announced ahead of its start (issue 26): it opens when the scan reaches its start, and the break playing
        // meanwhile goes on (announcements of several breaks may precede, and follow, a CUE-OUT).
        const b = startAt(undefined, startSeq, ev);
        avails.push(b);
        ahead.push(b);
        return;
      }
      if (open) close(open, startSeq);
      const b = startAt(seg, startSeq, ev);
      b.startVisible = visible;
      // Content already passed between the break start and the tag's segment counts toward the break.
      if (ev.startMs !== undefined && seg?.pdtMs !== undefined) b.elapsed = Math.max(0, (seg.pdtMs - ev.startMs) / 1000);
      else for (const s of segs) if (s.mediaSequence >= startSeq && s.mediaSequence < seq) b.elapsed += s.duration;
      avails.push(b);
      open = b;
      return;
    }
    if (ev.dir === 'cont') {
      if (open) {
        // A CONT carrying SCTE-35 names the break as the slid-out window will: same id whether its CUE-OUT is visible or not.
        enrich(open, ev);
        return;
      }
      if (avails.length || !seg) return; // only the first cue of a window may stand for a break that slid out
      const elapsed = ev.elapsed ?? 0;
      if (seg.mediaSequence - Math.round(elapsed / slot) < 0) {
        warnings.push({ line: seg.line, message: `elapsed ${elapsed} s puts the break start before media sequence 0`, reason: 'bad_elapsed' });
        return;
      }
      const b = startAt(undefined, seg.mediaSequence - Math.round(elapsed / slot), { ...ev, kind: 'cue-out-cont' });
      b.startVisible = elapsed === 0;
      b.elapsed = elapsed;
      if (seg.pdtMs !== undefined) b.startPdtMs = seg.pdtMs - elapsed * 1000;
      avails.push(b);
      open = b;
      return;
    }
    if (open) close(open, seq);
  };

  for (const seg of segs) {
    const starting = ahead.findIndex((a) => a.startSegmentIndex === seg.mediaSequence);
    if (starting >= 0) {
      const b = ahead.splice(starting, 1)[0]!;
      if (open) close(open, seg.mediaSequence);
      open = b;
    }
    for (const tag of seg.tags) {
      const ev = eventOf(tag, warnings);
      if (ev) handle(ev, seg, seg.mediaSequence);
    }
    if (open && open.startSegmentIndex <= seg.mediaSequence) {
      open.elapsed += seg.duration;
      if (open.durationFromCue && open.elapsed >= open.duration - END_TOLERANCE) close(open, seg.mediaSequence + 1);
    }
  }
  const next = (segs[segs.length - 1]?.mediaSequence ?? pl.mediaSequence - 1) + 1;
  for (const tag of pl.trailingTags) {
    const ev = eventOf(tag, warnings);
    if (ev) handle(ev, undefined, next);
  }
  const vod = isVodPlaylist(pl);
  if (open && vod) close(open, next);
  if (vod) {
    // A VOD's EXT-X-CUE-OUT:0 marks an insertion point: ads are added there, every content segment stays (issue 19).
    for (const a of avails) if (a.kind === 'cue-out' && a.durationFromCue && a.duration === 0) { a.insert = true; a.endSegmentIndex = a.startSegmentIndex; }
    for (const a of avails) {
      let t = 0;
      for (const s of segs) { if (s.mediaSequence >= a.startSegmentIndex) break; t += s.duration; }
      a.contentOffsetSeconds = Math.round(t * 1000) / 1000;
    }
  }

  return {
    avails: avails.map(({ elapsed, ...a }) => {
      if (!a.id) a.id = a.startPdtMs !== undefined ? `pdt-${Math.round(a.startPdtMs / 1000)}` : `seq-${a.startSegmentIndex}`;
      if (!a.durationFromCue) a.duration = Math.round(elapsed * 1000) / 1000;
      return a;
    }),
    warnings,
  };
}
