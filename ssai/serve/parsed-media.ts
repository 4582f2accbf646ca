// An origin media playlist scanned and its breaks found, once per origin fetch and shared by every session (issue 5
// "Speed by design").
import { scanMediaPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { findAvails, type Avail } from '../parse/cue-finder.js';
import type { SsaiMetrics } from '../metrics.js';
import { derive, type OriginOk } from './origin-fetcher.js';

/** A scanned origin media playlist and its avails: computed once per origin fetch, shared by every session. */
export type ParsedMedia = { playlist: MediaPlaylist; avails: Avail[]; error?: undefined } | { playlist?: undefined; avails?: undefined; error: string };
export function parsedMedia(result: OriginOk, metrics?: SsaiMetrics): ParsedMedia {
  return derive(result, 'media', (text): ParsedMedia => {
    const scanned = scanMediaPlaylist(text);
    if (!scanned.playlist) return { error: scanned.error.message };
    const found = findAvails(scanned.playlist);
    // Malformed cues are ignored (the content plays) and counted once per origin fetch (issue 19 point 3).
    for (const w of found.warnings) metrics?.cueErrors.inc({ reason: w.reason });
    return { playlist: scanned.playlist, avails: found.avails };
  });
}
