// Ad-insertion configurations as other parts read them: the SSAI proxy by guid, live channels scoped to their
// organization. The control plane (src/adinserts) owns them, caches them and registers the reads in ctx.services.

export const ADINSERT_TYPES = ['live', 'broker'] as const;
export type AdinsertType = (typeof ADINSERT_TYPES)[number];

/** How a break reaches the viewer (issue 30): stitched into the playlist, or guided by HLS Interstitials. */
export const INSERTION_MODES = ['stitched', 'guided'] as const;
export type InsertionMode = (typeof INSERTION_MODES)[number];

/** Avail suppression modes (issue 31, the managed services' names): which breaks get no ad decision. */
export const AVAIL_SUPPRESSION_MODES = ['OFF', 'BEHIND_LIVE_EDGE', 'AFTER_LIVE_EDGE'] as const;
export type AvailSuppressionMode = (typeof AVAIL_SUPPRESSION_MODES)[number];
/** A viewer joining mid-break: the rest of it filled (PARTIAL_AVAIL) or no decision at all (FULL_AVAIL_ONLY). */
export const AVAIL_FILL_POLICIES = ['PARTIAL_AVAIL', 'FULL_AVAIL_ONLY'] as const;
export type AvailFillPolicy = (typeof AVAIL_FILL_POLICIES)[number];

export interface AvailSuppression {
  mode: AvailSuppressionMode;
  /** how far from the live edge, seconds (written HH:MM:SS) */
  valueSeconds: number;
  fillPolicy: AvailFillPolicy;
}

/**
 * The ad-operations policies of a configuration (issue 31). Every field is optional: left out, behaviour is the one
 * before the field existed.
 */
export interface AdPolicies {
  /** a break whose ads leave more than this unfilled (s) is not personalised: the viewer sees the content */
  personalizationThresholdSeconds?: number;
  availSuppression?: AvailSuppression;
  /** short clips (≤ 10 s) played at the start and end of every filled break */
  bumperStartUrl?: string;
  bumperEndUrl?: string;
  /** the ad server asked for a live viewer's pre-roll when they join ([variables] allowed) */
  livePrerollAdServer?: string;
  /** the longest live pre-roll, s */
  livePrerollMaxSeconds?: number;
  /** false: the origin's cue tags are removed from the stitched playlist (default true: kept for downstream systems) */
  adMarkerPassthrough?: boolean;
  /** a content segment's URL: this prefix + its path after source_url */
  contentSegmentPrefix?: string;
  /** an ad segment's URL: this prefix + its path after the engine's public URL */
  adSegmentPrefix?: string;
}

/** What the proxy and the live channels need: the stored record with its organization. */
export interface AdinsertConfig extends AdPolicies {
  guid: string;
  organizationId: string;
  name: string;
  adServer: string;
  type: AdinsertType;
  sourceUrl: string;
  slateAd?: string;
  /** ad_server_max_rps: absent, no cap */
  adServerMaxRps?: number;
  /** insertion_mode: how sessions get their breaks unless they choose (default stitched) */
  insertionMode: InsertionMode;
  /** insertion_mode_override: whether a session may choose the other mode (`ads.mode`; default true) */
  insertionModeOverride: boolean;
  createdAt: number;
  updatedAt: number;
}

/** What a live channel needs of an ad-insertion configuration to build its SSAI playback URL (spec 2.11, 4.2). */
export interface AdinsertRef {
  /** the configuration's guid */
  id: string;
  type: string;
  sourceUrl: string;
}

/** Organization-scoped read of ad-insertion configurations, given by the SSAI part; used by src/channels. */
export interface AdinsertLookup {
  get(organizationId: string, id: string): Promise<AdinsertRef | undefined>;
}

export interface AdinsertCache {
  /** for the proxy: any organization's configuration by guid, cached */
  get(guid: string): Promise<AdinsertConfig | undefined>;
  /** get without a wait when the configuration is cached and fresh; undefined otherwise (then ask get) */
  getNow?(guid: string): AdinsertConfig | undefined;
  /** for live channels building SSAI playback URLs: only the organization's own configuration */
  findForOrganization(organizationId: string, guid: string): Promise<AdinsertConfig | undefined>;
  invalidate(guid: string): void;
}

// The one declaration of the adinsert entries of ctx.services (module augmentation, ARCHITECTURE.md).
declare module '../context.js' {
  interface EngineServices {
    /** cached reads of ad-insertion configurations by guid (the proxy) or scoped to an organization */
    adinserts?: AdinsertCache;
    /** the organization-scoped lookup of live channels (src/channels/channel.view.ts) */
    adinsertLookup?: AdinsertLookup;
  }
}
