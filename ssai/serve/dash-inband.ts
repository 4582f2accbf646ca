// Inband SCTE-35 cues of a DASH origin (issue 33 item 2, InbandEventStream; SCTE 214-1 §6): the emsg boxes of the
// media segments of one Representation that announces urn:scte:scte35:2013:bin (the smallest: the least to fetch),
// read once per origin whatever the number of viewers. Each segment is fetched once, read as far as its first moof
// (where emsg boxes stop) and its cues kept while the MPD lists it; a segment that cannot be fetched is tried again on
// a later MPD fetch. The viewer's MPD waits for the segments' reads up to a deadline, then goes with the cues known.
import { request } from 'undici';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { fillTemplate } from '../check/mpd-checker.js';
import { headComplete, readEmsgs } from '../parse/emsg.js';
import { emsgCues, SCTE35_INBAND_SCHEME } from '../parse/emsg-cues.js';
import { childrenNamed, type MpdRead, type MpdRepresentation } from '../parse/mpd-reader.js';
import type { MpdCue, MpdCueWarning } from '../parse/mpd-cues.js';
import { resolveUri } from '../../media/playlist-scanner.js';

export type InbandDeps = {
  logger: Logger;
  /** ssai_dash_inband_segments_total{result}: segments read for their emsg boxes (read, error) */
  segments: Counter<'result'>;
  /** ssai_cue_errors_total{reason}: a segment's unreadable cues, counted once when the segment is read */
  cueErrors: Counter<'reason'>;
  timeoutMs?: number;
  /**
   * How long an MPD request waits for the segments' reads: live 3 s (a window's new segments, a few), VOD 10 s (every
   * segment on the first request; a session decided before they are read keeps the breaks it was given)
   */
  waitMs?: { live: number; vod: number };
  /** bytes read of a segment at most before its first moof */
  maxHeadBytes?: number;
};

type SegmentRead = { cues: MpdCue[]; warnings: MpdCueWarning[] };
/** `complete`: every listed segment was read (else some are still being read, or failed and will be tried again). */
export type InbandRead = SegmentRead & { complete: boolean };
type OriginState = { segments: Map<string, Promise<SegmentRead | undefined>>; usedAt: number };

/** Segments read per origin MPD at most (a long VOD's first ones; a live window is far shorter). */
const MAX_SEGMENTS = 2000;
/** Segments read at once per origin. */
const CONCURRENCY = 4;
/** Origins remembered at most (the least recently used forgotten first). */
const MAX_ORIGINS = 500;

/** Whether an element announces SCTE-35 inband (an InbandEventStream of the binary scheme). */
const announces = (el: Element | undefined): boolean => el !== undefined
  && childrenNamed(el, 'InbandEventStream').some((s) => s.getAttribute('schemeIdUri') === SCTE35_INBAND_SCHEME);
type Element = MpdRepresentation['element'];

/**
 * The Representation of each Period whose segments carry the cues: one that announces them (or whose AdaptationSet
 * does), the smallest; a Period without one has no inband cues.
 */
export function inbandRepresentations(read: MpdRead): MpdRepresentation[] {
  return read.periods.flatMap((p) => p.representations
    .filter((r) => r.addressing?.media && (announces(r.element) || announces(r.adaptationSet)))
    .sort((a, b) => a.bandwidth - b.bandwidth).slice(0, 1));
}

/**
 * The absolute URL of each of the Representation's media segments, with its start in seconds of the MPD's timeline
 * (its Period's start + its time in the Period).
 */
function segmentUrls(read: MpdRead, rep: MpdRepresentation, mpdUrl: string, max: number): Array<{ url: string; startSec: number }> {
  const a = rep.addressing!;
  const period = read.periods[rep.periodIndex]!;
  let base = mpdUrl;
  for (const el of [read.mpd, period.element, rep.adaptationSet, rep.element]) {
    const b = childrenNamed(el, 'BaseURL')[0]?.textContent?.trim();
    if (b) base = resolveUri(base, b);
  }
  return a.segments.slice(0, max).map((s) => ({
    url: resolveUri(base, fillTemplate(a.media!, { id: rep.id, bandwidth: String(rep.bandwidth), n: s.n, t: s.t })),
    startSec: period.startSec + (s.t - a.presentationTimeOffset) / a.timescale,
  }));
}

export class InbandCues {
  private readonly origins = new Map<string, OriginState>();
  constructor(private readonly deps: InbandDeps) {}

  /**
   * The inband cues of the MPD's segments (none when no Representation announces them). `mpdUrl`: the origin MPD's
   * URL, the key under which its segments' reads are shared.
   */
  async cues(mpdUrl: string, read: MpdRead): Promise<InbandRead> {
    const reps = inbandRepresentations(read);
    if (!reps.length) return { cues: [], warnings: [], complete: true };
    // a version 1 box is timed on its Representation's media timeline: less the presentationTimeOffset, plus the
    // Period's start, it is on the MPD's
    const wanted: Array<{ url: string; startSec: number; ptoSec: number }> = [];
    for (const rep of reps) {
      const ptoSec = rep.addressing!.presentationTimeOffset / rep.addressing!.timescale - read.periods[rep.periodIndex]!.startSec;
      for (const w of segmentUrls(read, rep, mpdUrl, MAX_SEGMENTS - wanted.length)) wanted.push({ ...w, ptoSec });
    }
    const state = this.stateOf(mpdUrl);
    // the segments the MPD no longer lists (a live window moved on) are forgotten, the new ones read
    const listed = new Set(wanted.map((w) => w.url));
    for (const url of state.segments.keys()) if (!listed.has(url)) state.segments.delete(url);
    const queue = wanted.filter((w) => !state.segments.has(w.url));
    const reads = new Map<string, (r: SegmentRead | undefined) => void>();
    for (const w of queue) state.segments.set(w.url, new Promise((resolve) => reads.set(w.url, resolve)));
    void this.readAll(queue, state, reads);
    const all = Promise.all(wanted.map((w) => state.segments.get(w.url)));
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([all, new Promise<undefined>((r) => { timer = setTimeout(() => r(undefined), read.type === 'static' ? this.deps.waitMs?.vod ?? 10_000 : this.deps.waitMs?.live ?? 3000); timer.unref(); })]);
    clearTimeout(timer);
    const results = waited ?? await Promise.all(wanted.map((w) => Promise.race([state.segments.get(w.url), Promise.resolve(undefined)])));
    const out: InbandRead = { cues: [], warnings: [], complete: results.every((r) => r !== undefined) };
    for (const r of results) if (r) { out.cues.push(...r.cues); out.warnings.push(...r.warnings); }
    return out;
  }

  private stateOf(mpdUrl: string): OriginState {
    let state = this.origins.get(mpdUrl);
    if (!state) {
      if (this.origins.size >= MAX_ORIGINS) {
        const oldest = [...this.origins.entries()].sort((x, y) => x[1].usedAt - y[1].usedAt)[0];
        if (oldest) this.origins.delete(oldest[0]);
      }
      state = { segments: new Map(), usedAt: Date.now() };
      this.origins.set(mpdUrl, state);
    }
    state.usedAt = Date.now();
    return state;
  }

  /** Reads the queued segments a few at a time; one that fails is dropped from the state (read again next time). */
  private async readAll(queue: Array<{ url: string; startSec: number; ptoSec: number }>, state: OriginState, reads: Map<string, (r: SegmentRead | undefined) => void>): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < queue.length) {
        const w = queue[next++]!;
        const head = await this.head(w.url);
        if (!head) state.segments.delete(w.url);
        const boxes = head ? readEmsgs(head) : undefined;
        const got = boxes ? emsgCues(boxes.boxes, { startSec: w.startSec }, w.ptoSec) : undefined;
        if (got) for (const e of boxes!.errors) got.warnings.push({ message: e, reason: 'bad_scte35' });
        for (const warning of got?.warnings ?? []) {
          this.deps.cueErrors.inc({ reason: warning.reason });
          this.deps.logger.warn({ url: w.url, message: warning.message }, 'an inband SCTE-35 cue could not be read');
        }
        this.deps.segments.inc({ result: head ? 'read' : 'error' });
        reads.get(w.url)?.(got);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  }

  /** A segment's bytes up to its first moof (the body is not read further), undefined when it cannot be fetched. */
  private async head(url: string): Promise<Uint8Array | undefined> {
    const timeoutMs = this.deps.timeoutMs ?? 5000;
    const max = this.deps.maxHeadBytes ?? 1 << 20;
    try {
      const res = await request(url, { signal: AbortSignal.timeout(timeoutMs), headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      if (res.statusCode >= 400) {
        await res.body.dump().catch(() => undefined);
        this.deps.logger.warn({ url, status: res.statusCode }, 'an inband-cue segment could not be read');
        return undefined;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        const bytes = Buffer.concat(chunks);
        if (headComplete(bytes) || size >= max) { res.body.destroy(); return bytes; }
      }
      return Buffer.concat(chunks);
    } catch (e) {
      this.deps.logger.warn({ url, err: e }, 'an inband-cue segment could not be read');
      return undefined;
    }
  }
}
