// Finds ad avails in a scanned media playlist from every common cue form (issue 5 "Media playlists").
// Ids stay stable across reloads of a sliding window so a session keeps its ad decision per avail.
import type { MediaPlaylist, MediaSegment, RawTag } from './playlist-scanner.js';
import { parseAttributes } from './playlist-scanner.js';
import { cueDirection, cueDurationSeconds, cueEventId, decodeScte35, type SpliceInfo } from './scte35.js';

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
};

export type CueWarning = { line: number; message: string };

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

function num(s: string | undefined): number | undefined {
  if (s === undefined || s === '') return undefined;
  const n = Number.parseFloat(s);
  return Number.isFinite(n) ? n : undefined;
}

function decoded(b64: string | undefined, warnings: CueWarning[], line: number): SpliceInfo | undefined {
  if (!b64) return undefined;
  const r = decodeScte35(b64);
  if (r.ok) return r.value;
  warnings.push({ line, message: `${r.error.code}: ${r.error.message}` });
  return undefined;
}

function fromScte(kind: CueKind, info: SpliceInfo | undefined, extra: Partial<CueEvent> = {}): CueEvent | undefined {
  if (!info) return undefined;
  const dir = extra.dir ?? cueDirection(info);
  if (!dir) return undefined;
  const ev: CueEvent = { dir, kind, scte35: info, ...extra };
  const d = extra.duration ?? cueDurationSeconds(info);
  if (d !== undefined) ev.duration = d;
  const id = cueEventId(info);
  if (ev.id === undefined && id !== undefined) ev.id = `scte-${id}`;
  return ev;
}

/** Translates one tag into a cue event, or undefined when the tag is not a cue. */
function eventOf(tag: RawTag, warnings: CueWarning[]): CueEvent | undefined {
  switch (tag.name) {
    case 'EXT-X-CUE-OUT': {
      const v = tag.value;
      const d = v.includes('=') ? num(parseAttributes(v).DURATION) : num(v);
      return d === undefined ? { dir: 'out', kind: 'cue-out' } : { dir: 'out', kind: 'cue-out', duration: d };
    }
    case 'EXT-X-CUE-OUT-CONT': {
      const v = tag.value;
      if (v.includes('=')) {
        const a = parseAttributes(v);
        const info = decoded(a.SCTE35, warnings, tag.line);
        const ev: CueEvent = { dir: 'cont', kind: 'cue-out-cont' };
        const e = num(a.ElapsedTime), d = num(a.Duration);
        if (e !== undefined) ev.elapsed = e;
        if (d !== undefined) ev.duration = d;
        const id = info && cueEventId(info);
        if (id !== undefined) ev.id = `scte-${id}`;
        if (info) ev.scte35 = info;
        return ev;
      }
      const [e, d] = v.split('/').map(num); // "elapsed/duration" form
      return { dir: 'cont', kind: 'cue-out-cont', ...(e !== undefined ? { elapsed: e } : {}), ...(d !== undefined ? { duration: d } : {}) };
    }
    case 'EXT-X-CUE-IN':
      return { dir: 'in', kind: 'cue-out' };
    case 'EXT-X-DATERANGE': {
      const a = parseAttributes(tag.value);
      const extra: Partial<CueEvent> = {};
      if (a.ID) extra.id = `dr-${a.ID}`;
      const start = a['START-DATE'] ? Date.parse(a['START-DATE']) : NaN;
      if (!Number.isNaN(start)) extra.startMs = start;
      const d = num(a.DURATION) ?? num(a['PLANNED-DURATION']);
      if (d !== undefined) extra.duration = d;
      if (a['SCTE35-OUT']) return fromScte('daterange', decoded(a['SCTE35-OUT'], warnings, tag.line), { ...extra, dir: 'out' }) ?? { ...extra, dir: 'out', kind: 'daterange' };
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
      const info = decoded(a.CUE, warnings, tag.line);
      const extra: Partial<CueEvent> = {};
      if (a.ID) extra.id = `scte-${a.ID}`;
      const d = num(a.DURATION);
      if (d !== undefined) extra.duration = d;
      const e = num(a.ELAPSED);
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
        const hit = segs.find((s) => s.pdtMs !== undefined && s.pdtMs + 1 >= ev.startMs!);
        if (hit) startSeq = hit.mediaSequence;
        if (ev.startMs < segs[0].pdtMs - 1) {
          visible = false;
          startSeq = segs[0].mediaSequence - Math.round((segs[0].pdtMs - ev.startMs) / 1000 / slot);
        }
      }
      if (open && (open.startSegmentIndex === startSeq || (ev.id !== undefined && ev.id === open.id))) {
        // Several forms for the same break (CUE-OUT + OATCLS...): enrich, keep the strongest id.
        enrich(open, ev);
        return;
      }
      if (avails.some((a) => ev.id !== undefined && a.id === ev.id)) return; // repeated DATERANGE of a closed break
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
  if (open && pl.endList) close(open, next);

  return {
    avails: avails.map(({ elapsed, ...a }) => {
      if (!a.id) a.id = a.startPdtMs !== undefined ? `pdt-${Math.round(a.startPdtMs / 1000)}` : `seq-${a.startSegmentIndex}`;
      if (!a.durationFromCue) a.duration = Math.round(elapsed * 1000) / 1000;
      return a;
    }),
    warnings,
  };
}
