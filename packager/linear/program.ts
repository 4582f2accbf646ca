// What a listing plays, flattened (pure): pieces of assets, each a run of whole segments. A piece change is an item
// change in the linear stream (a discontinuity); an ad piece carries its break for the cue tags.
import { countBelow, type LinearAsset } from './asset.js';

export interface Piece {
  asset: LinearAsset;
  /** segment range [from, to) of the asset */
  from: number;
  to: number;
  /** set on the pieces that are ad breaks (spec 2.10 `ads`): the break's duration in ms */
  adMs?: number;
}

/** One loop of a listing's content with its cumulative timing. */
export interface Program {
  pieces: Piece[];
  /** per segment of one loop, in order: its end in ms from the loop start */
  endsMs: number[];
  /** per segment: its piece index and its segment index inside the asset */
  pieceOf: number[];
  segmentOf: number[];
  /** per piece: the end (ms from the loop start) of its first segment, ascending */
  pieceFirstEndsMs: number[];
  /** per piece: index of its first segment in the loop */
  pieceFirstSegment: number[];
  loopMs: number;
  /** one loop's segments */
  count: number;
}

export interface AdAt {
  /** seconds from the start of the source */
  start: number;
  asset: LinearAsset;
  /** 1: the ad replaces as much of the source; 0: the source waits */
  substitute: 0 | 1;
}

export interface SourceEntry {
  asset: LinearAsset;
  ads?: AdAt[];
}

const startOf = (asset: LinearAsset, i: number): number => (i === 0 ? 0 : asset.endsMs[i - 1]!);

/**
 * A playlist's sources with their ads as pieces: an ad goes in at the first segment boundary at or after its start;
 * a substituting ad skips the source's segments it covers (whole segments, at least its duration).
 */
export function expandSources(sources: SourceEntry[]): Piece[] {
  const pieces: Piece[] = [];
  const push = (piece: Piece) => {
    if (piece.to > piece.from) pieces.push(piece);
  };
  for (const { asset, ads } of sources) {
    const count = asset.durationsMs.length;
    let cursor = 0;
    for (const ad of [...(ads ?? [])].sort((a, b) => a.start - b.start)) {
      // segment boundaries are the starts: index of the first start ≥ ad start
      const at = Math.max(cursor, Math.min(count, countBelow([0, ...asset.endsMs.slice(0, -1)], ad.start * 1000)));
      push({ asset, from: cursor, to: at });
      push({ asset: ad.asset, from: 0, to: ad.asset.durationsMs.length, adMs: ad.asset.totalMs });
      cursor = at;
      if (ad.substitute === 1) {
        let skip = at;
        while (skip < count && startOf(asset, skip) - startOf(asset, at) < ad.asset.totalMs) skip++;
        cursor = skip;
      }
    }
    push({ asset, from: cursor, to: count });
  }
  return pieces;
}

export function makeProgram(pieces: Piece[]): Program {
  const endsMs: number[] = [];
  const pieceOf: number[] = [];
  const segmentOf: number[] = [];
  const pieceFirstEndsMs: number[] = [];
  const pieceFirstSegment: number[] = [];
  let t = 0;
  const kept = pieces.filter((p) => p.to > p.from);
  kept.forEach((piece, p) => {
    for (let i = piece.from; i < piece.to; i++) {
      t += piece.asset.durationsMs[i]!;
      if (i === piece.from) {
        pieceFirstEndsMs.push(t);
        pieceFirstSegment.push(endsMs.length);
      }
      endsMs.push(t);
      pieceOf.push(p);
      segmentOf.push(i);
    }
  });
  return { pieces: kept, endsMs, pieceOf, segmentOf, pieceFirstEndsMs, pieceFirstSegment, loopMs: t, count: endsMs.length };
}
