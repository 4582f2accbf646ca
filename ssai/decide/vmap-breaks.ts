// The VMAP breaks of a VOD session (issue 19 point 2): asked of the ad server once per session and kept with it, so
// every rendition, reload and instance places the same breaks and decides each from its own break's VAST.
import type { Logger } from 'pino';
import { keys, type SessionRecord } from './avail-record.js';
import type { Avail } from '../parse/cue-finder.js';
import type { SsaiMetrics } from '../metrics.js';
import { isVodPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import type { SessionStore } from '../store/session-store.js';
import type { VmapBreak } from './vast-decision.js';
import { availsFromVmap, fetchVmapBreaks, VMAP_AVAIL_PREFIX } from './vmap-avails.js';

export interface VmapBreaksDeps {
  store: SessionStore;
  metrics: SsaiMetrics;
  logger: Logger;
  sessionTtlMs: number;
}

export class VmapBreaks {
  private readonly vmapFetches = new Map<string, Promise<VmapBreak[]>>();

  constructor(private readonly deps: VmapBreaksDeps) {}

  /** The VMAP break a VMAP avail was placed from (undefined for any other avail, or a break no longer known). */
  async breakOf(session: SessionRecord, avail: Avail): Promise<VmapBreak | undefined> {
    if (!avail.id.startsWith(VMAP_AVAIL_PREFIX)) return undefined;
    const breaks = (await this.deps.store.get<{ breaks: VmapBreak[] }>(keys.vmap(session.id)))?.breaks ?? [];
    const id = avail.id.slice(VMAP_AVAIL_PREFIX.length);
    return breaks.find((x, i) => (x.breakId || String(i)) === id);
  }

  /**
   * Avails of a VOD (ENDLIST) playlist from the ad server's VMAP, asked once per session (the breaks are kept with
   * the session, so every rendition, reload and instance places the same breaks). Empty when the ad server answers
   * anything but VMAP or fails: cues still apply. The server calls this for ENDLIST playlists without cue avails.
   */
  async vmapAvails(session: SessionRecord, adServerUrl: string, pl: MediaPlaylist): Promise<Avail[]> {
    if (!isVodPlaylist(pl)) return [];
    const key = keys.vmap(session.id);
    let breaks = (await this.deps.store.get<{ breaks: VmapBreak[] }>(key))?.breaks;
    if (!breaks) {
      let pending = this.vmapFetches.get(key);
      if (!pending) {
        pending = (async () => {
          const got = await fetchVmapBreaks(adServerUrl, {
            sessionId: session.id, availIndex: 0, availDuration: 0, playerParams: session.playerParams,
            ...(session.userAgent !== undefined ? { userAgent: session.userAgent } : {}), ...(session.clientIp !== undefined ? { clientIp: session.clientIp } : {}),
          });
          if (!got.ok && got.reason === 'error') {
            this.deps.metrics.adServerErrors.inc({ reason: 'http' });
            this.deps.logger.info({ session: session.id, reason: got.message }, 'VMAP request failed; the VOD plays its cues only');
          }
          const list = got.ok ? got.breaks : [];
          return (await this.deps.store.setIfAbsent(key, { breaks: list }, this.deps.sessionTtlMs)).value.breaks;
        })().finally(() => this.vmapFetches.delete(key));
        this.vmapFetches.set(key, pending);
      }
      breaks = await pending;
    }
    const placed = availsFromVmap(pl, breaks);
    for (const w of placed.warnings) this.deps.logger.debug({ session: session.id, ...w }, 'VMAP break not placed');
    return placed.avails;
  }
}
