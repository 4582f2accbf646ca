// The ad decisions of a debug session (issue 31 item 8): asked through a client that shows the log every ad server
// request and raw answer, and recorded with what the break plays and why. Only sessions started with ads.debug=1
// come here (the planner checks `session.debug`).
import type { DebugDecisionOutcome, DebugDecisionReason, DebugLog, DebugSession } from '../store/debug-log.js';
import type { AvailRecord } from './avail-record.js';
import { adIdOf } from './packed-tracking.js';
import type { AdDecisionClient, AdServerObserver } from './vast-decision.js';

/** Reasons a record's `error` may start with (`<reason>: …`) that the log names as they are. */
const OWN_REASONS: ReadonlySet<string> = new Set<DebugDecisionReason>(['late', 'suppressed', 'threshold']);
/** Slack between a break and its ads before the rest counts as unfilled (as pickAdsForAvail's tolerance). */
const FILL_TOLERANCE_SECONDS = 0.5;

/** What a decided break plays, and why it is not (wholly) ads, read from its record. */
export function outcomeOf(record: AvailRecord): { outcome: DebugDecisionOutcome; reason?: DebugDecisionReason } {
  // (bumpers count with the ads: they play only around ads, and fill the break as much)
  const ads = record.ads.filter((a) => !a.slate);
  const adSeconds = ads.reduce((t, a) => t + a.duration, 0);
  const slate = record.ads.some((a) => a.slate);
  const short = !record.insert && adSeconds < record.duration - FILL_TOLERANCE_SECONDS;
  const outcome: DebugDecisionOutcome = ads.length ? (slate || short ? 'partly-filled' : 'filled') : slate ? 'slate' : 'content';
  if (outcome === 'filled') return { outcome };
  // an ad-operations policy (issue 31): the break plays its content by choice
  if (record.unpersonalised) return { outcome, reason: record.unpersonalised === 'suppression' ? 'suppressed' : 'threshold' };
  if (record.error) {
    const token = record.error.slice(0, Math.max(0, record.error.indexOf(':')));
    if (OWN_REASONS.has(token)) return { outcome, reason: token as DebugDecisionReason };
    return { outcome, reason: token === 'empty' ? 'empty' : 'ad-server-error' };
  }
  // the slate's own skip (not prepared in time) says why the rest is content, not why ads are missing
  const skipped = record.skipped.filter((s) => s.adId !== 'slate' && !s.adId.startsWith('bumper-'));
  if (skipped.some((s) => s.reason.startsWith('not prepared') || s.reason.startsWith('failed') || s.reason === 'no usable media file')) return { outcome, reason: 'unprepared-creative' };
  if (skipped.some((s) => s.reason === 'does not fit the avail')) return { outcome, reason: 'no-fit' };
  return { outcome, reason: ads.length ? 'short' : 'empty' };
}

export class DebugDecisions {
  /**
   * `observed`: a decision client that reports its ad server exchanges (a VastDecisionClient on this thread: a debug
   * session's decisions skip the decision threads, whose answers carry no raw text); absent, the planner's own client
   * is used and only decisions are logged.
   */
  constructor(readonly log: DebugLog, private readonly observed?: (observe: AdServerObserver) => AdDecisionClient) {}

  /** The client a debug session's break is decided with. */
  clientFor(session: DebugSession, availId: string, planners: AdDecisionClient): AdDecisionClient {
    return this.observed ? this.observed((exchange) => this.log.adRequest(session, availId, exchange)) : planners;
  }

  /** A decision the session keeps (`late`: the decision landed after its break got the late record, and is dropped). */
  decided(session: DebugSession, record: AvailRecord, dropped?: AvailRecord): void {
    const { outcome, reason } = outcomeOf(record);
    this.log.decision(session, record.id, outcome, reason, {
      duration: record.duration,
      ads: record.ads.map((a, i) => ({ adId: adIdOf(record, i), creativeId: a.creativeId, duration: a.duration, ...(a.slate ? { slate: true } : {}), ...(a.bumper ? { bumper: a.bumper } : {}) })),
      ...(record.skipped.length ? { skipped: record.skipped } : {}),
      ...(record.error ? { error: record.error } : {}),
      ...(dropped ? { dropped: { ...outcomeOf(dropped), why: 'the decision landed after the deadline; the break keeps its late record' } } : {}),
    });
  }
}
