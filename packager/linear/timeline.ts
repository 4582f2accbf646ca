// The linear channel's timeline (pure, issue 15 "Playback"): a function of the schedule and the clock only, so any
// process answers identically. From the Unix epoch the wall clock is cut into blocks (a listing's content, slate for
// what nothing covers, the loop's replays); each block places whole segments of its program back to back from its
// start, ending by its end. Media sequence and discontinuity numbers count every segment and every item change since
// the epoch: closed forms per block (whole loops plus a binary search), prefix sums over blocks, so a request costs
// O(log) whatever the channel's age, and the numbers only grow as the clock moves. They are then counted from the
// channel's own origin (`numberedFromMs`), so a channel's discontinuity sequence starts near 0: counted from 1970, the
// slate's loops alone made it ~224 million, and hls.js 1.7 walks an array indexed by it on every playlist load
// (StreamController.onLevelLoaded: `initPTS.some(...)`), 5 s of main thread each time, so it never started playing.
import { countAtMost, countBelow } from './asset.js';
import type { Program } from './program.js';

export interface Block {
  /** wall clock, epoch ms; end may be Infinity for the last block */
  start: number;
  end: number;
  program: Program;
  /** ms into the program at the block's start (a replayed block cut at the loop's beginning) */
  offset: number;
  /** the listing this block plays, when it plays one (slate otherwise) */
  listing?: string;
}

/** Where segment `g` (index in the program's endless loop) of a block is, and its numbers. */
export interface PlacedSegment {
  seq: number;
  /** discontinuity sequence number of the segment */
  disc: number;
  /** an EXT-X-DISCONTINUITY precedes it (item change) */
  discontinuity: boolean;
  startMs: number;
  durationMs: number;
  program: Program;
  /** index of the segment in one loop of the program */
  local: number;
  block: Block;
}

interface Stats { first: number; endIdx: number; count: number; discs: number }

const startsOf = new WeakMap<Program, { starts: number[]; pieceFirstStarts: number[] }>();
function starts(p: Program): { starts: number[]; pieceFirstStarts: number[] } {
  let s = startsOf.get(p);
  if (!s) {
    const seg = p.endsMs.map((e, i) => (i === 0 ? 0 : p.endsMs[i - 1]!));
    s = { starts: seg, pieceFirstStarts: p.pieceFirstSegment.map((i) => seg[i]!) };
    startsOf.set(p, s);
  }
  return s;
}

/** segments of the endless loop ending by x (ms of program time) */
function endsBy(p: Program, x: number): number {
  if (x < 0) return 0;
  const k = Math.floor(x / p.loopMs);
  return k * p.count + countAtMost(p.endsMs, x - k * p.loopMs);
}
/** segments of the endless loop starting before x */
function startsBefore(p: Program, x: number): number {
  if (x <= 0) return 0;
  const k = Math.floor(x / p.loopMs);
  return k * p.count + countBelow(starts(p).starts, x - k * p.loopMs);
}
function pieceFirstsEndBy(p: Program, x: number): number {
  if (x < 0) return 0;
  const k = Math.floor(x / p.loopMs);
  return k * p.pieces.length + countAtMost(p.pieceFirstEndsMs, x - k * p.loopMs);
}
function pieceFirstsStartBefore(p: Program, x: number): number {
  if (x <= 0) return 0;
  const k = Math.floor(x / p.loopMs);
  return k * p.pieces.length + countBelow(starts(p).pieceFirstStarts, x - k * p.loopMs);
}
/** piece-first segments among global indices < g */
function pieceFirstsBelowIndex(p: Program, g: number): number {
  const k = Math.floor(g / p.count);
  return k * p.pieces.length + countBelow(p.pieceFirstSegment, g - k * p.count);
}
const isPieceFirst = (p: Program, local: number): boolean => local === 0 || p.pieceOf[local] !== p.pieceOf[local - 1];
const segStart = (p: Program, g: number): number => {
  const k = Math.floor(g / p.count);
  const j = g - k * p.count;
  return k * p.loopMs + (j === 0 ? 0 : p.endsMs[j - 1]!);
};

/** an ad piece's segment other than its first (the window must not start there) */
function insideBreak(s: PlacedSegment): boolean {
  const piece = s.program.pieces[s.program.pieceOf[s.local]!]!;
  return piece.adMs !== undefined && !s.discontinuity;
}

function blockStats(b: Block): Stats {
  const p = b.program;
  if (p.count === 0 || p.loopMs <= 0) return { first: 0, endIdx: 0, count: 0, discs: 0 };
  const first = startsBefore(p, b.offset);
  const endIdx = b.end === Infinity ? Infinity : endsBy(p, b.offset + (b.end - b.start));
  const count = Math.max(0, endIdx - first);
  if (count === 0) return { first, endIdx: first, count: 0, discs: 0 };
  if (endIdx === Infinity) return { first, endIdx, count, discs: Infinity };
  const pieceStarts = Math.max(0, pieceFirstsEndBy(p, b.offset + (b.end - b.start)) - pieceFirstsStartBefore(p, b.offset));
  return { first, endIdx, count, discs: pieceStarts + (isPieceFirst(p, first % p.count) ? 0 : 1) };
}

interface BlockRef { block: Block; stats: Stats; seqBase: number; discBase: number; index: number }

export interface TimelineInput {
  /** contiguous or not, sorted by start, not overlapping; before, between and after them plays `slate` */
  blocks: Block[];
  slate: Program;
  /** replay the last `loopMs` before the end of the last block instead of slate */
  loopMs?: number;
  /**
   * Wall clock (epoch ms) from which the numbers count: the first segment starting there has media sequence 0 and
   * discontinuity sequence 0. Fixed for the channel (every process must agree) and before any window ever served.
   * Default 0: the epoch.
   */
  numberedFromMs?: number;
}

export class Timeline {
  private readonly history: Block[] = [];
  private readonly historyStats: Stats[] = [];
  private readonly seqBase: number[] = [];
  private readonly discBase: number[] = [];
  private readonly template: Block[] = [];
  private readonly templateStats: Stats[] = [];
  private readonly templateSeq: number[] = [];
  private readonly templateDisc: number[] = [];
  private cycleSegments = 0;
  private cycleDiscs = 0;
  private loopStart = Infinity;
  private loopMs = 0;
  /** the epoch-counted numbers of the first segment at or after numberedFromMs (subtracted from every number) */
  private seqOrigin = 0;
  private discOrigin = 0;

  constructor(input: TimelineInput) {
    let t = 0;
    const slate = (start: number, end: number) => ({ start, end, program: input.slate, offset: 0 });
    for (const b of input.blocks) {
      if (b.start > t) this.history.push(slate(t, b.start));
      this.history.push(b);
      t = b.end;
    }
    const looping = input.loopMs !== undefined && input.loopMs > 0 && input.blocks.length > 0;
    if (!looping) this.history.push(slate(t, Infinity));
    let seq = 0;
    let disc = 0;
    for (const b of this.history) {
      const s = blockStats(b);
      this.historyStats.push(s);
      this.seqBase.push(seq);
      this.discBase.push(disc);
      seq += s.count;
      disc += s.discs;
    }
    if (looping) {
      this.loopStart = t;
      this.loopMs = input.loopMs!;
      const from = t - this.loopMs;
      for (const b of this.history) {
        if (b.end <= from) continue;
        const start = Math.max(b.start, from);
        const clipped: Block = { ...b, start, offset: b.offset + (start - b.start) };
        const s = blockStats(clipped);
        this.template.push(clipped);
        this.templateStats.push(s);
        this.templateSeq.push(this.cycleSegments);
        this.templateDisc.push(this.cycleDiscs);
        this.cycleSegments += s.count;
        this.cycleDiscs += s.discs;
      }
      this.loopEndSeq = seq;
      this.loopEndDisc = disc;
      // Nothing playable to replay: slate instead of an endless walk over empty cycles.
      if (this.cycleSegments === 0) {
        this.template.length = 0;
        this.loopStart = Infinity;
        const b = slate(t, Infinity);
        this.history.push(b);
        this.historyStats.push(blockStats(b));
        this.seqBase.push(seq);
        this.discBase.push(disc);
      }
    }
    if (input.numberedFromMs !== undefined) {
      const first = this.segmentsFrom(input.numberedFromMs).next();
      if (!first.done) {
        this.seqOrigin = first.value.seq;
        this.discOrigin = first.value.disc;
      }
    }
  }

  private loopEndSeq = 0;
  private loopEndDisc = 0;

  /** Block number `index` in time order: history blocks, then the loop's replays. */
  private ref(index: number): BlockRef | undefined {
    if (index < this.history.length) {
      return { block: this.history[index]!, stats: this.historyStats[index]!, seqBase: this.seqBase[index]!, discBase: this.discBase[index]!, index };
    }
    if (this.template.length === 0) return undefined;
    const n = index - this.history.length;
    const cycle = Math.floor(n / this.template.length);
    const b = n - cycle * this.template.length;
    const shift = (cycle + 1) * this.loopMs;
    const t = this.template[b]!;
    return {
      block: { ...t, start: t.start + shift, end: t.end + shift },
      stats: this.templateStats[b]!,
      seqBase: this.loopEndSeq + cycle * this.cycleSegments + this.templateSeq[b]!,
      discBase: this.loopEndDisc + cycle * this.cycleDiscs + this.templateDisc[b]!,
      index,
    };
  }

  /** The block playing at wall time t. */
  private indexAt(t: number): number {
    if (t < this.loopStart || this.template.length === 0) {
      let lo = 0;
      let hi = this.history.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (this.history[mid]!.start <= t) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    }
    const cycle = Math.floor((t - this.loopStart) / this.loopMs);
    const inCycle = t - (cycle + 1) * this.loopMs;
    let lo = 0;
    let hi = this.template.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.template[mid]!.start <= inCycle) lo = mid;
      else hi = mid - 1;
    }
    return this.history.length + cycle * this.template.length + lo;
  }

  private place(ref: BlockRef, g: number): PlacedSegment {
    const { block, stats } = ref;
    const p = block.program;
    const local = g % p.count;
    const tagsAfterFirst = g > stats.first ? pieceFirstsBelowIndex(p, g + 1) - pieceFirstsBelowIndex(p, stats.first + 1) : 0;
    return {
      seq: ref.seqBase + (g - stats.first) - this.seqOrigin,
      disc: ref.discBase + 1 + tagsAfterFirst - this.discOrigin,
      discontinuity: g === stats.first || isPieceFirst(p, local),
      startMs: block.start + (segStart(p, g) - block.offset),
      durationMs: p.endsMs[local]! - (local === 0 ? 0 : p.endsMs[local - 1]!),
      program: p,
      local,
      block,
    };
  }

  /** Segments in time order from the first one starting at or after `from`, while `accept` holds. */
  *segmentsFrom(from: number): Generator<PlacedSegment> {
    let index = this.indexAt(from);
    let first = true;
    for (;;) {
      const ref = this.ref(index++);
      if (!ref) return;
      const { block, stats } = ref;
      if (stats.count > 0) {
        let g = stats.first;
        if (first && from > block.start) g = Math.max(g, startsBefore(block.program, block.offset + (from - block.start)));
        for (; g < stats.endIdx; g++) yield this.place(ref, g);
      }
      first = false;
    }
  }

  /**
   * The live window at `now`: the last `count` segments that ended by `now` (at most `maxAgeMs` back). A window never
   * starts inside an ad break: the break's remaining segments leave together, so an SSAI proxy always sees a break
   * from its CUE-OUT (and its DISCONTINUITY) or not at all.
   */
  window(now: number, count: number, maxAgeMs: number): PlacedSegment[] {
    return this.liveWindow(now, count, maxAgeMs, 0).segments;
  }

  /**
   * The live window with what its tags need beyond it: the segment before its first (a CUE-IN belongs to the first
   * content segment after a break wherever the window starts) and the breaks starting within `aheadMs` after its last
   * segment's start (announced ahead, issue 26).
   */
  liveWindow(now: number, count: number, maxAgeMs: number, aheadMs: number): LiveWindow {
    const out: PlacedSegment[] = [];
    let before: PlacedSegment | undefined;
    let next: PlacedSegment | undefined;
    for (const s of this.segmentsFrom(now - maxAgeMs)) {
      if (s.startMs + s.durationMs > now) { next = s; break; }
      out.push(s);
      if (out.length > count) before = out.shift();
    }
    while (out.length > 1 && insideBreak(out[0]!)) before = out.shift();
    const first = out[0];
    if (first && before?.seq !== first.seq - 1) before = this.segmentBefore(first, maxAgeMs);
    const breaks: PlacedSegment[] = out.filter(startsBreak);
    const last = out.at(-1);
    if (last && aheadMs > 0 && next) {
      for (const s of this.segmentsFrom(next.startMs)) {
        if (s.startMs > last.startMs + aheadMs) break;
        if (startsBreak(s)) breaks.push(s);
      }
    }
    return { segments: out, ...(before ? { before } : {}), breaks };
  }

  /** The segment before `s` (which starts within lookbackMs of it), undefined when none does. */
  private segmentBefore(s: PlacedSegment, lookbackMs: number): PlacedSegment | undefined {
    let found: PlacedSegment | undefined;
    for (const x of this.segmentsFrom(s.startMs - lookbackMs)) {
      if (x.seq >= s.seq) break;
      found = x;
    }
    return found?.seq === s.seq - 1 ? found : undefined;
  }
}

export interface LiveWindow {
  segments: PlacedSegment[];
  /** the segment just before the window's first */
  before?: PlacedSegment;
  /** first segments of the ad breaks in the window and of those starting soon after it, in time order */
  breaks: PlacedSegment[];
}

/** An ad piece's first segment: where a break starts. */
export function startsBreak(s: PlacedSegment): boolean {
  const piece = s.program.pieces[s.program.pieceOf[s.local]!]!;
  return piece.adMs !== undefined && s.program.segmentOf[s.local] === piece.from;
}
