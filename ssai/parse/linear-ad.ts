// A linear ad as the ad server's answer gives it, whichever path read it (vast-inline.ts's tokenizer or the full VAST
// client of vast-decision.ts): its own module, so both readers import it and neither imports the other.
export type MediaFileInfo = { url: string; type: string; width: number; height: number; bitrate: number };
export type TrackingEvents = {
  impression: string[]; start: string[]; firstQuartile: string[]; midpoint: string[]; thirdQuartile: string[]; complete: string[]; error: string[];
};
export type LinearAd = { adId: string; creativeId: string; sequence?: number; duration: number; mediaFiles: MediaFileInfo[]; trackingEvents: TrackingEvents };
