// A session track's marks (issue 26, 27): for each break placed on the track, the origin discontinuities it absorbed
// (under the break's id) and its first segment there (under anchorKey(id)), so every later playlist of the track,
// from any proxy, numbers the same way; under takenKey(id), that it took its siblings' view of the break
// (session-marks.ts).
//
// Stored as a list of [name, numbers] pairs, not as an object keyed by break: the names are new with every break, and
// once a track's marks were too long to be shared between viewers (SHARED_MAX_JSON, some twenty breaks), each viewer's
// object, parsed again at every reload, got hidden classes of its own (V8 Maps, descriptor arrays, enum caches: +7,800
// Maps for 3,000 tracks in a heap snapshot of the hour's soak), and the proxy's resident memory climbed from then on
// (issue 32). A pair list is arrays only, and its pairs are shared by the viewers of the same breaks.

/** A track's marks, by break id, anchorKey(break id) or takenKey(break id). */
export type TrackMarks = ReadonlyMap<string, readonly number[]>;

/** What the store holds: [name, numbers] pairs. */
export type StoredTrackMarks = ReadonlyArray<readonly [string, readonly number[]]>;

export const NO_MARKS: TrackMarks = new Map();

const isNumbers = (v: unknown): v is readonly number[] => Array.isArray(v) && v.every((n) => typeof n === 'number' && Number.isFinite(n));

/**
 * The marks of a stored value: the pair list, or the object of a proxy from before it (a session outlives an
 * upgrade); anything else, or any malformed entry, reads as no mark (the store is ours, but never trusted blindly).
 */
export function marksFromStored(value: unknown): TrackMarks {
  const out = new Map<string, readonly number[]>();
  if (Array.isArray(value)) {
    for (const pair of value as unknown[]) {
      if (Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && isNumbers(pair[1])) out.set(pair[0], pair[1]);
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [name, numbers] of Object.entries(value)) if (isNumbers(numbers)) out.set(name, numbers);
  }
  return out;
}

export function marksToStored(marks: TrackMarks): StoredTrackMarks {
  return [...marks];
}
