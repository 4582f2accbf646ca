// One virtual channel's schedule turned into its timeline and ladder: everything a playlist request needs, built once
// per schedule change (the server caches it), so requests only cut windows.
import type { LinearAsset, Track } from './asset.js';
import { expandSources, makeProgram, type SourceEntry } from './program.js';
import type { MasterVariant } from './render.js';
import type { LinearSchedule } from '../../kernel/seams/linear-schedule.js';
import { Timeline, type Block } from './timeline.js';

export interface ChannelModel {
  timeline: Timeline;
  variants: MasterVariant[];
  targetDuration: number;
  withAudio: boolean;
}

export async function buildModel(schedule: LinearSchedule, asset: (vod: string) => Promise<LinearAsset | undefined>, slate: LinearAsset): Promise<ChannelModel> {
  const slateProgram = makeProgram(expandSources([{ asset: slate }]));
  const used = new Set<LinearAsset>();
  const blocks: Block[] = [];
  // One lookup per VOD per build, however many listings play it.
  const seen = new Map<string, Promise<LinearAsset | undefined>>();
  const lookup = asset;
  asset = (vod) => {
    let hit = seen.get(vod);
    if (!hit) seen.set(vod, (hit = lookup(vod)));
    return hit;
  };
  // Listings that play the same thing share one program (a schedule names a few playlists many times).
  const programs = new Map<string, ReturnType<typeof makeProgram>>();
  for (const listing of schedule.listings) {
    const key = JSON.stringify(listing.sources);
    const known = programs.get(key);
    if (known) {
      blocks.push({ start: listing.start * 1000, end: listing.end * 1000, program: known.count ? known : slateProgram, offset: 0, listing: listing.guid });
      continue;
    }
    const entries: SourceEntry[] = [];
    for (const source of listing.sources) {
      const main = await asset(source.vod);
      if (!main) continue; // a VOD deleted or re-encoding since: the listing plays what is left
      const ads = [];
      for (const ad of source.ads ?? []) {
        const adAsset = await asset(ad.vod);
        if (adAsset) ads.push({ start: ad.start, asset: adAsset, substitute: ad.substitute });
      }
      entries.push({ asset: main, ads });
    }
    const program = makeProgram(expandSources(entries));
    programs.set(key, program);
    for (const piece of program.pieces) used.add(piece.asset);
    blocks.push({ start: listing.start * 1000, end: listing.end * 1000, program: program.count ? program : slateProgram, offset: 0, listing: listing.guid });
  }
  const loopMs = schedule.loopIntervalHours ? Math.round(schedule.loopIntervalHours * 3_600_000) : undefined;
  const timeline = new Timeline({ blocks, slate: slateProgram, ...(loopMs ? { loopMs } : {}), ...(schedule.numberedFromMs !== undefined ? { numberedFromMs: schedule.numberedFromMs } : {}) });

  // The ladder every item maps onto: as many variants as the poorest asset has; each advertises the most any asset needs.
  const assets = used.size ? [...used] : [slate];
  const count = Math.max(1, Math.min(...assets.map((a) => a.variants.length)));
  const variants: MasterVariant[] = Array.from({ length: count }, (_, j) => {
    const at = assets.map((a) => a.variants[Math.min(j, a.variants.length - 1)]).filter((v) => v !== undefined);
    const tallest = at.reduce((m, v) => ((v.height ?? 0) > (m?.height ?? 0) ? v : m), at[0]);
    // CODECS of the tallest: its profile and level are the most any item of this variant needs (same codec family).
    const codecs = tallest?.codecs ?? at.find((v) => v.codecs)?.codecs;
    return {
      bandwidth: Math.max(...at.map((v) => v.bandwidth)), ...(tallest?.width && tallest.height ? { width: tallest.width, height: tallest.height } : {}),
      ...(codecs ? { codecs } : {}),
    };
  });
  const tracks: Track[] = [...assets, slate].flatMap((a) => [...a.variants, ...(a.audio ? [a.audio] : [])]);
  const targetDuration = Math.max(1, ...tracks.flatMap((t) => t.durations.map((d) => Math.round(d))));
  return { timeline, variants, targetDuration, withAudio: [...assets, slate].every((a) => a.audio !== undefined) };
}

/** The track of `asset` that variant j of the channel plays. */
export function variantPick(j: number): (asset: LinearAsset) => Track | undefined {
  return (asset) => asset.variants[Math.min(j, asset.variants.length - 1)];
}
