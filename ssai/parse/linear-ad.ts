// A linear ad as the ad server's answer gives it, whichever path read it (vast-inline.ts's tokenizer or the full VAST
// client of vast-decision.ts): its own module, so both readers import it and neither imports the other.
export type MediaFileInfo = { url: string; type: string; width: number; height: number; bitrate: number };
export type TrackingEvents = {
  impression: string[]; start: string[]; firstQuartile: string[]; midpoint: string[]; thirdQuartile: string[]; complete: string[]; error: string[];
};
export type LinearAd = {
  adId: string; creativeId: string; sequence?: number; duration: number; mediaFiles: MediaFileInfo[]; trackingEvents: TrackingEvents;
  /** VAST 4 <UniversalAdId> of the creative (the first): `registry:value`, or the value alone without a registry */
  universalAdId?: string;
  /** the ad's <AdSystem> text (its version attribute left out) */
  adSystem?: string;
};

/** A VAST 4 <UniversalAdId> as one string: `registry:value`, the value alone when the registry is absent or "unknown". */
export function universalAdIdOf(registry: string | null | undefined, value: string | null | undefined): string | undefined {
  const v = (value ?? '').trim();
  if (!v || v === 'unknown') return undefined;
  const r = (registry ?? '').trim();
  return r && r !== 'unknown' ? `${r}:${v}` : v;
}
