// Prometheus metrics of the proxy (issue 5 point 4), on the engine's registry.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type PlaylistKind = 'master' | 'media' | 'session' | 'segment' | 'tracking' | 'assets' | 'debug';
export type OriginErrorReason = 'timeout' | 'http_4xx' | 'http_5xx' | 'connection' | 'not_hls' | 'too_large';

export interface SsaiMetrics {
  served: Counter<'kind' | 'status'>;
  latency: Histogram<'kind'>;
  availSeconds: Counter;
  filledSeconds: Counter;
  fillRate: Gauge;
  adServerErrors: Counter<'reason'>;
  originErrors: Counter<'reason'>;
  originFetches: Counter;
  creativesSkipped: Counter<'reason'>;
  beacons: Counter<'result'>;
  /** VAST errors reported to the ad server's <Error> URLs, by VAST error code (issue 31 point 7) */
  vastErrors: Counter<'code'>;
  /** malformed cues ignored (issue 19 point 3), once per origin fetch */
  cueErrors: Counter<'reason'>;
  /** DASH media segments read for their emsg cues (issue 33, InbandEventStream), by result: read, error */
  inbandSegments: Counter<'result'>;
  /** ad decisions made ahead of their break (announced by a future cue), and decisions that missed their deadline */
  decisionsEarly: Counter;
  decisionsLate: Counter;
  /** decisions of breaks announced ahead not made by the end of their lead (the cap or the event loop held them) */
  decisionsAheadLate: Counter;
  /** decisions sent to the ad server (issue 28: rate() is the ad server's requests per second) */
  adServerRequests: Counter;
  /** decisions waiting for their turn (a slot under the configuration's ad_server_max_rps, or a free decision) */
  decisionQueue: Gauge<'kind'>;
  /** decisions sent and not yet answered, and how long each took from its send to its record (stop 54: a crowd's
   * decisions queue on the machine's cores as well as at the ad server, and more in flight then only waits longer) */
  decisionsInFlight: Gauge;
  decisionSeconds: Histogram;
  /** live playlists that ended before a break still being decided instead of waiting for it (issue 28 point 2) */
  playlistsCut: Counter;
  /** live breaks kept in their retired form once long out of the window (issue 19 point 4) */
  breaksRetired: Counter;
  /** breaks left to their content by an ad-operations policy (issue 31): personalization threshold, avail suppression */
  breaksUnpersonalised: Counter<'reason'>;
  /** what the proxy did without its session store (Redis away, issue 27), by operation */
  storeUnavailable: Counter<'operation'>;
  /** entries written to debug sessions' logs (issue 31 item 8), by kind: session, origin, ad-request, decision */
  debugEntries: Counter<'kind'>;
}

/**
 * decision: a break played content; session: a new viewer played the origin, or an unknown session its content;
 * read / write: a value served from or kept in this process only; beacon: a beacon de-duplicated in this process only
 */
export type StoreOperation = 'decision' | 'session' | 'read' | 'write' | 'beacon';

export function createSsaiMetrics(registry: Registry): SsaiMetrics {
  const availSeconds = new Counter({ name: 'ssai_avail_seconds_total', help: 'Seconds of ad avails decided', registers: [registry] });
  const filledSeconds = new Counter({ name: 'ssai_avail_filled_seconds_total', help: 'Seconds of ad avails filled with ads', registers: [registry] });
  return {
    served: new Counter({ name: 'ssai_playlists_served_total', help: 'Proxy responses by kind and status', labelNames: ['kind', 'status'] as const, registers: [registry] }),
    latency: new Histogram({
      name: 'ssai_request_duration_seconds', help: 'Proxy latency by kind', labelNames: ['kind'] as const, registers: [registry],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    }),
    availSeconds,
    filledSeconds,
    fillRate: new Gauge({
      name: 'ssai_fill_rate', help: 'Filled ad seconds over avail seconds since start', registers: [registry],
      async collect() {
        const avail = (await availSeconds.get()).values[0]?.value ?? 0;
        const filled = (await filledSeconds.get()).values[0]?.value ?? 0;
        this.set(avail > 0 ? filled / avail : 0);
      },
    }),
    adServerErrors: new Counter({ name: 'ssai_ad_server_errors_total', help: 'Ad decisions that failed, by reason', labelNames: ['reason'] as const, registers: [registry] }),
    originErrors: new Counter({ name: 'ssai_origin_errors_total', help: 'Origin playlist fetches that failed, by reason', labelNames: ['reason'] as const, registers: [registry] }),
    originFetches: new Counter({ name: 'ssai_origin_fetches_total', help: 'Origin playlist requests actually sent (after coalescing)', registers: [registry] }),
    creativesSkipped: new Counter({ name: 'ssai_creatives_skipped_total', help: 'Ads left out of an avail, by reason', labelNames: ['reason'] as const, registers: [registry] }),
    inbandSegments: new Counter({ name: 'ssai_dash_inband_segments_total', help: 'DASH media segments read for their inband (emsg) SCTE-35 cues, once per origin, by result', labelNames: ['result'] as const, registers: [registry] }),
    cueErrors: new Counter({ name: 'ssai_cue_errors_total', help: 'Malformed ad cues ignored in origin playlists (once per fetch), by reason', labelNames: ['reason'] as const, registers: [registry] }),
    decisionsEarly: new Counter({ name: 'ssai_decisions_early_total', help: 'Ad decisions made ahead of their break, spread over its announcement lead', registers: [registry] }),
    decisionsLate: new Counter({ name: 'ssai_decisions_late_total', help: 'Ad decisions that missed their deadline: the break plays slate or content', registers: [registry] }),
    decisionsAheadLate: new Counter({ name: 'ssai_decisions_ahead_late_total', help: 'Decisions of breaks announced ahead not made by the end of their lead (held by ad_server_max_rps or a busy process): their playlists wait for them as for a break in the window', registers: [registry] }),
    adServerRequests: new Counter({ name: 'ssai_ad_server_requests_total', help: 'Ad decisions sent to the ad server (a wrapper chain counts once): its requests per second are the rate of this', registers: [registry] }),
    decisionsInFlight: new Gauge({ name: 'ssai_decisions_in_flight', help: 'Ad decisions sent to the ad server and not yet answered', registers: [registry] }),
    decisionSeconds: new Histogram({ name: 'ssai_decision_duration_seconds', help: 'Ad decisions from their send to the ad server to their stored record (the ad server, the VAST chain, the creatives and the wait for a core)', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry] }),
    decisionQueue: new Gauge({ name: 'ssai_decision_queue_depth', help: 'Ad decisions waiting for their turn: in_window (a playlist waits, up to the decision deadline), ahead (a break announced ahead, spread over its lead)', labelNames: ['kind'] as const, registers: [registry] }),
    playlistsCut: new Counter({ name: 'ssai_playlists_cut_total', help: 'Live playlists answered at once, ending before a break whose decision was still running (its ads listed on a later reload)', registers: [registry] }),
    breaksRetired: new Counter({ name: 'ssai_breaks_retired_total', help: 'Live breaks long out of the window reduced to what later numbering needs', registers: [registry] }),
    breaksUnpersonalised: new Counter({
      name: 'ssai_breaks_unpersonalised_total', help: 'Breaks that played their content by an ad-operations policy, by reason: threshold (the ads left more unfilled than the personalization threshold), suppression (avail suppression: no ad-server request)',
      labelNames: ['reason'] as const, registers: [registry],
    }),
    storeUnavailable: new Counter({
      name: 'ssai_store_unavailable_total', help: 'Proxy operations done without the session store (Redis away), by operation: decision, session, read, write, beacon',
      labelNames: ['operation'] as const, registers: [registry],
    }),
    debugEntries: new Counter({ name: 'ssai_debug_entries_total', help: 'Entries written to the debug logs of sessions started with ads.debug=1, by kind', labelNames: ['kind'] as const, registers: [registry] }),
    vastErrors: new Counter({ name: 'ssai_vast_errors_total', help: 'VAST errors reported to the ad server (its <Error> URLs fired once per decision), by VAST error code', labelNames: ['code'] as const, registers: [registry] }),
    beacons: new Counter({ name: 'ssai_beacons_total', help: 'Server-side VAST beacons by result', labelNames: ['result'] as const, registers: [registry] }),
  };
}
