// SCTE-35 cues of a static MPD (issue 33 item 2, SCTE 214-1 §5.3): the Events of a Period's EventStreams in either
// scheme, urn:scte:scte35:2013:xml (a SpliceInfoSection written as XML: SpliceInsert, or TimeSignal with a
// SegmentationDescriptor) and urn:scte:scte35:2014:xml+bin (the section's bytes in base64 in a Binary element), read
// as break starts on the MPD's timeline, whichever of its Periods holds them. Pure.
import type { Element } from '@xmldom/xmldom';
import { cueDirection, cueDurationSeconds, cueEventId, decodeScte35, SEGMENTATION_ENDS, SEGMENTATION_STARTS, type SpliceInfo } from '../../media/scte35.js';
import type { Avail, CueErrorReason } from './cue-finder.js';
import { childrenNamed, type MpdRead } from './mpd-reader.js';

export const SCTE35_XML_SCHEME = 'urn:scte:scte35:2013:xml';
export const SCTE35_BIN_SCHEME = 'urn:scte:scte35:2014:xml+bin';

/** A cue on the MPD's timeline: a break starts (out) or ends (in) at `atSec` (its Period's start + its time in the Period). */
export type MpdCue = { id: string; dir: 'out' | 'in'; atSec: number; durationSec?: number; scte35?: SpliceInfo; scheme: string };
export type MpdCueWarning = { message: string; reason: CueErrorReason };

/** 90 kHz: SCTE-35 durations. */
const TICKS = 90_000;
/** No ad break lasts longer (as cue-finder): a longer one is a malformed cue. */
export const MAX_BREAK_SECONDS = 7200;

function descendant(el: Element, name: string): Element | undefined {
  const all = el.getElementsByTagNameNS('*', name);
  return all.length ? all[0] ?? undefined : undefined;
}

const flag = (v: string | null): boolean => v === 'true' || v === '1';

/** The cue of an Event of the 2013 XML scheme: its direction, id and duration from the SpliceInfoSection's elements. */
function fromXml(event: Element): Omit<MpdCue, 'atSec' | 'scheme'> | string | undefined {
  const insert = descendant(event, 'SpliceInsert');
  if (insert) {
    if (flag(insert.getAttribute('spliceEventCancelIndicator'))) return undefined;
    const id = insert.getAttribute('spliceEventId');
    const duration = descendant(insert, 'BreakDuration')?.getAttribute('duration');
    const cue: Omit<MpdCue, 'atSec' | 'scheme'> = { id: id ? `scte-${id}` : '', dir: flag(insert.getAttribute('outOfNetworkIndicator')) ? 'out' : 'in' };
    if (duration) cue.durationSec = Number(duration) / TICKS;
    return cue;
  }
  if (!descendant(event, 'TimeSignal')) return 'neither a SpliceInsert nor a TimeSignal';
  const seg = descendant(event, 'SegmentationDescriptor');
  if (!seg || flag(seg.getAttribute('segmentationEventCancelIndicator'))) return undefined;
  const type = Number(seg.getAttribute('segmentationTypeId'));
  const dir = SEGMENTATION_STARTS.has(type) ? 'out' : SEGMENTATION_ENDS.has(type) ? 'in' : undefined;
  if (!dir) return undefined; // a segmentation type that is no break (a program or chapter start)
  const id = seg.getAttribute('segmentationEventId');
  const duration = seg.getAttribute('segmentationDuration');
  const cue: Omit<MpdCue, 'atSec' | 'scheme'> = { id: id ? `scte-${id}` : '', dir };
  if (duration) cue.durationSec = Number(duration) / TICKS;
  return cue;
}

/** The cue of an Event of the 2014 binary scheme: the decoded section. */
function fromBinary(event: Element): Omit<MpdCue, 'atSec' | 'scheme'> | string | undefined {
  return sectionCue((descendant(event, 'Binary')?.textContent ?? event.textContent ?? '').trim());
}

/**
 * The cue of a binary splice_info_section (base64, or bytes: an emsg's message_data): its direction, id and break or
 * segmentation duration; undefined for a section that is no break (splice_null, a program start); a string: why it
 * cannot be read.
 */
export function sectionCue(section: string | Uint8Array): Omit<MpdCue, 'atSec' | 'scheme'> | string | undefined {
  const decoded = decodeScte35(section);
  if (!decoded.ok) return `${decoded.error.code}: ${decoded.error.message}`;
  const info = decoded.value;
  const dir = cueDirection(info);
  if (!dir) return undefined;
  const id = cueEventId(info);
  const cue: Omit<MpdCue, 'atSec' | 'scheme'> = { id: id !== undefined ? `scte-${id}` : '', dir, scte35: info };
  const d = cueDurationSeconds(info);
  if (d !== undefined) cue.durationSec = d;
  return cue;
}

/**
 * The SCTE-35 cues of the MPD's Periods, in time order. An Event's own @duration stands for a cue without a break
 * duration; an out cue without either lasts until the next in cue (else it is an insertion point: duration 0).
 */
export function mpdCues(read: MpdRead): { cues: MpdCue[]; warnings: MpdCueWarning[] } {
  const cues: MpdCue[] = [];
  const warnings: MpdCueWarning[] = [];
  for (const period of read.periods) for (const stream of childrenNamed(period.element, 'EventStream')) {
    const scheme = stream.getAttribute('schemeIdUri') ?? '';
    if (scheme !== SCTE35_XML_SCHEME && scheme !== SCTE35_BIN_SCHEME) continue;
    const timescale = Number(stream.getAttribute('timescale') || 1);
    const pto = Number(stream.getAttribute('presentationTimeOffset') || 0);
    if (!(timescale > 0) || !Number.isFinite(pto)) { warnings.push({ message: `an EventStream of ${scheme} has a malformed timescale or presentationTimeOffset`, reason: 'bad_date' }); continue; }
    for (const event of childrenNamed(stream, 'Event')) {
      const cue = scheme === SCTE35_BIN_SCHEME ? fromBinary(event) : fromXml(event);
      if (cue === undefined) continue;
      if (typeof cue === 'string') { warnings.push({ message: cue, reason: 'bad_scte35' }); continue; }
      const at = (Number(event.getAttribute('presentationTime') || 0) - pto) / timescale;
      if (!Number.isFinite(at) || at < 0) { warnings.push({ message: `Event ${event.getAttribute('id') ?? '?'} has no presentationTime in the Period`, reason: 'bad_date' }); continue; }
      const own = Number(event.getAttribute('duration'));
      if (cue.durationSec === undefined && own > 0) cue.durationSec = own / timescale;
      if (cue.durationSec !== undefined && !(cue.durationSec >= 0 && cue.durationSec <= MAX_BREAK_SECONDS)) {
        warnings.push({ message: `break duration ${cue.durationSec} s`, reason: 'bad_duration' });
        continue;
      }
      // (an Event's @id is unique in its EventStream only: named with its Period's, which a live Period keeps)
      if (!cue.id) cue.id = event.getAttribute('id') ? `dash-${period.id}-${event.getAttribute('id')}` : `dash-${Math.round((period.startSec + at) * 1000)}`;
      cues.push({ ...cue, atSec: period.startSec + at, scheme });
    }
  }
  return { cues: orderedCues(cues), warnings };
}

/**
 * Cues of every source of a Period (its EventStreams, its segments' emsg boxes) in time order, each once (an inband
 * cue repeats in the segments up to its splice), an out cue without a length lasting until the next in cue (else an
 * insertion point: duration 0).
 */
export function orderedCues(all: readonly MpdCue[]): MpdCue[] {
  const seen = new Set<string>();
  const cues = all.filter((c) => { const k = `${c.id} ${c.dir} ${c.atSec}`; if (seen.has(k)) return false; seen.add(k); return true; })
    .map((c) => ({ ...c })).sort((a, b) => a.atSec - b.atSec);
  cues.forEach((c, i) => {
    if (c.dir !== 'out' || c.durationSec !== undefined) return;
    const back = cues.slice(i + 1).find((x) => x.dir === 'in');
    c.durationSec = back ? back.atSec - c.atSec : 0;
  });
  return cues;
}

/** The boundary of `starts` (segment starts, then the end) nearest to `sec`: its index. */
function nearest(bounds: number[], sec: number): number {
  let best = 0;
  for (let k = 1; k < bounds.length; k++) if (Math.abs(bounds[k]! - sec) < Math.abs(bounds[best]! - sec)) best = k;
  return best;
}

/**
 * The breaks of the cues on the reference video's segments (numbered from 0, as timelinePlaylist): each out cue
 * starts at the nearest segment boundary; with a duration it replaces the content up to the boundary nearest its end
 * (as a VOD HLS CUE-OUT does), without one (or 0) it is an insertion point (as CUE-OUT:0): the ads go in, the content
 * stays. One break per boundary, the first cue's.
 */
export function cueAvails(cues: readonly MpdCue[], starts: ReadonlyArray<{ start: number; duration: number }>): Avail[] {
  const last = starts[starts.length - 1];
  if (!last) return [];
  const bounds = [...starts.map((s) => s.start), last.start + last.duration];
  const slot = [...starts.map((s) => s.duration)].sort((a, b) => a - b)[Math.floor(starts.length / 2)] ?? last.duration;
  const taken = new Set<number>();
  const avails: Avail[] = [];
  for (const c of cues) {
    if (c.dir !== 'out') continue;
    const start = nearest(bounds, c.atSec);
    if (taken.has(start)) continue;
    taken.add(start);
    const end = c.durationSec ? Math.max(start, nearest(bounds, c.atSec + c.durationSec)) : start;
    const insert = end === start;
    const avail: Avail = {
      id: c.id, startSegmentIndex: start, endSegmentIndex: end, startVisible: true,
      duration: insert ? 0 : Math.round((bounds[end]! - bounds[start]!) * 1000) / 1000, durationFromCue: true, open: false,
      kind: 'daterange', slotDuration: slot, contentOffsetSeconds: Math.round(bounds[start]! * 1000) / 1000,
      ...(c.scte35 ? { scte35: c.scte35 } : {}), ...(insert ? { insert: true } : {}),
    };
    avails.push(avail);
  }
  return avails;
}
