// The assembler's read of the broker (kernel/seams/linear-schedule.ts) over the control plane's store: a virtual channel's
// listings with their playlists' sources and ads, and where each playable VOD's HLS lies in the media store.
import path from 'node:path';
import type { EngineContext } from '../../kernel/context.js';
import { ListingStore } from '../broker-listings/listing.store.js';
import { PlaylistStore } from '../broker-playlists/playlist.store.js';
import { VodStore } from '../vod/vod.store.js';
import type { AssetLocation, LinearListing, LinearSchedule, LinearScheduleSource } from '../../kernel/seams/linear-schedule.js';
import { BrokerChannelStore } from './broker-channel.store.js';
import { linearToken } from './playback-url.js';

/** A channel's numbers count from a day before its creation: no window served reaches back past that. */
const NUMBERED_BEFORE_CREATION_MS = 24 * 3_600_000;

export function mediaDirOf(ctx: EngineContext): string {
  return ctx.services.vod?.mediaDir ?? path.join(ctx.config.dataDir, 'media');
}

export function mediaUrlOf(ctx: EngineContext): string {
  return `${ctx.config.publicUrl.replace(/\/+$/, '')}/media`;
}

export function linearScheduleSource(ctx: EngineContext): LinearScheduleSource {
  const { db } = ctx.store;
  const channels = new BrokerChannelStore(db);
  const listings = new ListingStore(db);
  const playlists = new PlaylistStore(db);
  const vods = new VodStore(db, () => ctx.clock.nowMs());
  return {
    token: (guid) => linearToken(ctx.vault, guid),
    load: async (guid): Promise<LinearSchedule | undefined> => {
      const channel = await channels.getAny(guid);
      if (!channel || channel.type !== 'virtual') return undefined;
      const out: LinearListing[] = [];
      // Most listings name a few playlists: each is read once per load.
      const read = new Map<string, Promise<LinearListing['sources']>>();
      const sourcesOf = (id: string) => {
        let hit = read.get(id);
        if (!hit) {
          hit = playlists.get(channel.organizationId, id).then((playlist) => (playlist?.sources ?? []).map((s) => ({
            vod: s.guid, ads: (s.ads ?? []).map((a) => ({ start: a.start, vod: a.guid, substitute: a.substitute })),
          })));
          read.set(id, hit);
        }
        return hit;
      };
      for (const l of await listings.list(guid)) {
        let sources: LinearListing['sources'] = [];
        if (l.vod) sources = [{ vod: l.vod }];
        else if (l.playlist) sources = await sourcesOf(l.playlist);
        out.push({ guid: l.guid, start: l.start, end: l.end, sources });
      }
      return { guid, ...(channel.loopInterval ? { loopIntervalHours: channel.loopInterval } : {}), numberedFromMs: channel.createdAt - NUMBERED_BEFORE_CREATION_MS, listings: out };
    },
    locate: async (vod): Promise<AssetLocation | undefined> => {
      const source = await vods.get(vod);
      if (!source || source.status !== 'complete' || !source.outputDir || !source.records?.formats.hasHls) return undefined;
      return { id: vod, dir: path.join(mediaDirOf(ctx), source.outputDir, 'cmaf'), baseUrl: `${mediaUrlOf(ctx)}/${source.outputDir}/cmaf` };
    },
  };
}
