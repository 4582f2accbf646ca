// Avail suppression at the door of a decision (issue 31 point 2): a live break the configuration suppresses for this
// viewer is stored as its content without asking the ad server (nothing is scheduled, paced or counted as a
// request); one the viewer joined under PARTIAL_AVAIL is decided for its rest. Both insertion modes pass here. The
// viewer's live edge is fixed at the session's first live playlist and kept in the store, so every rendition, reload
// and process judges a break alike. The rules are ssai/decide/break-policy.ts.
import type { AdPolicies } from '../../kernel/seams/adinserts.js';
import type { MediaPlaylist } from '../../media/playlist-scanner.js';
import type { AdPlanner } from '../decide/ad-planner.js';
import { keys, type AvailRecord } from '../decide/avail-record.js';
import { liveEdgeOf, restOfBreak, startAfterEdgeMs, suppressionOf, type BreakPolicies, type LiveEdge } from '../decide/break-policy.js';
import type { Avail } from '../parse/cue-finder.js';
import { isSessionStoreUnavailable, type SessionStore } from '../store/session-store.js';
import type { HotSession } from './hot-sessions.js';

export interface BreakGateDeps {
  store: SessionStore;
  planner: Pick<AdPlanner, 'suppressedRecord'>;
  now: () => number;
  sessionTtlMs: number;
}

/** What a decision of a break goes on with: the break (or its rest) to decide, or the stored record of a suppressed one. */
export type Admission = { avail: Avail } | { record: AvailRecord };

/** The policies a decision applies, from its configuration. */
export function breakPolicies(config: AdPolicies): BreakPolicies | undefined {
  const p: BreakPolicies = {};
  if (config.personalizationThresholdSeconds !== undefined) p.personalizationThresholdSeconds = config.personalizationThresholdSeconds;
  if (config.bumperStartUrl) p.bumperStartUrl = config.bumperStartUrl;
  if (config.bumperEndUrl) p.bumperEndUrl = config.bumperEndUrl;
  return Object.keys(p).length ? p : undefined;
}

/** Whether a configuration suppresses any break (only then is a viewer's live edge kept). */
export function suppresses(config: AdPolicies): boolean {
  return config.availSuppression !== undefined && config.availSuppression.mode !== 'OFF';
}

export class BreakGate {
  /** when this process first read each scanned playlist (shared by every session of an origin refresh) */
  private readonly readAt = new WeakMap<MediaPlaylist, number>();
  /** viewers' live edges, by their cached session (only sessions under suppression have one) */
  private readonly edges = new WeakMap<HotSession, LiveEdge>();

  constructor(private readonly deps: BreakGateDeps) {}

  private readAtMs(pl: MediaPlaylist): number {
    let at = this.readAt.get(pl);
    if (at === undefined) this.readAt.set(pl, at = this.deps.now());
    return at;
  }

  /**
   * The viewer's live edge: the end of the first live playlist of the session (on any rendition: the first stored
   * wins), undefined while the store is away (then nothing is suppressed).
   */
  async liveEdge(hot: HotSession, pl: MediaPlaylist): Promise<LiveEdge | undefined> {
    const known = this.edges.get(hot);
    if (known) return known;
    const mine = liveEdgeOf(pl, this.readAtMs(pl));
    try {
      const { value } = await this.deps.store.setIfAbsent(keys.liveEdge(hot.session.id), mine, this.deps.sessionTtlMs);
      this.edges.set(hot, value);
      return value;
    } catch (e) {
      if (isSessionStoreUnavailable(e)) return undefined;
      throw e;
    }
  }

  /** A live break as this viewer's decision sees it under the configuration's avail suppression (`pl`: where it was found). */
  async admit(config: AdPolicies, hot: HotSession, avail: Avail, pl: MediaPlaylist, targetDuration: number): Promise<Admission> {
    if (!suppresses(config) || avail.insert) return { avail };
    const edge = await this.liveEdge(hot, pl);
    if (!edge) return { avail };
    const after = startAfterEdgeMs(avail, pl, this.readAtMs(pl), edge);
    const verdict = suppressionOf(config.availSuppression, after, avail.duration, avail.open && !avail.durationFromCue);
    if (verdict.fill === 'all') return { avail };
    const rest = verdict.fill === 'rest' ? restOfBreak(avail, verdict.skipSeconds, pl, targetDuration) : undefined;
    if (rest) return { avail: rest };
    return { record: await this.deps.planner.suppressedRecord(hot.session, avail, targetDuration) };
  }
}
