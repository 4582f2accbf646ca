// What a session's tracks saw its breaks absorb (stop 53), shared between them in one store key. A track first loaded
// after an absorbed origin discontinuity slid out of its window (an audio language switched to, an audio playlist a
// segment behind its video) cannot see it, and without it numbered its discontinuities one apart from its siblings:
// hls.js then never starts that audio. Kept by break and first segment, so tracks that place a break apart share
// nothing. Read only for a break whose start the track never listed, written only with something new.
import { unionOfSorted } from '../stitch/manifest-rewriter.js';
import type { StoreFallbacks } from './store-outage.js';
import type { TrackMarks } from './track-marks.js';

/** A break's name in the session's marks: its id and its first segment. */
const sessionMark = (availId: string, start: number): string => `${availId}@${start}`;

/**
 * A track's own mark that it took its siblings' view of a break: its later reloads read the session's key no more
 * for it (what it took is in its own marks by then).
 */
export const takenKey = (availId: string): string => `+${availId}`;

/** The session's marks as one reload of one track reads and adds to them: read at most once, written at most once. */
export class SessionMarks {
  private seen: TrackMarks | undefined;
  private next: Map<string, readonly number[]> | undefined;

  constructor(private readonly fallbacks: StoreFallbacks, private readonly key: string) {}

  /** What the session's tracks saw the break starting at `start` absorb (empty: nothing, or none loaded it yet). */
  async absorbed(availId: string, start: number): Promise<readonly number[]> {
    return (await this.read()).get(sessionMark(availId, start)) ?? [];
  }

  /** What this track saw the break absorb, for its siblings: kept by keep() where it is new. */
  async offer(availId: string, start: number, absorbed: readonly number[]): Promise<void> {
    const name = sessionMark(availId, start);
    const known = this.next?.get(name) ?? (await this.read()).get(name) ?? [];
    const union = unionOfSorted(known, absorbed);
    if (union !== known) (this.next ??= new Map(this.seen)).set(name, union);
  }

  async keep(): Promise<void> {
    if (this.next) await this.fallbacks.keepObserved(this.key, this.next);
  }

  private async read(): Promise<TrackMarks> {
    return this.seen ??= this.fallbacks.observedNow(this.key) ?? await this.fallbacks.observed(this.key);
  }
}
