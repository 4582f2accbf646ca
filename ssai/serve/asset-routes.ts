// The assets of a guided break (issue 30 point 3): each ad of a viewer's decision as an HLS stream of its own, a
// multivariant playlist of the creative's renditions and their media playlists. Their segments go through the
// /v1/segment redirect, which fires the viewer's beacons as in stitched mode.
import { keys, type AvailRecord } from '../decide/avail-record.js';
import { adIdsOf } from '../decide/packed-tracking.js';
import type { AdPlanner } from '../decide/ad-planner.js';
import type { CreativeTrack } from '../stitch/creative-plan.js';
import type { VariantEntry } from '../stitch/manifest-rewriter.js';
import type { PlaylistPolicy } from '../stitch/playlist-policy.js';
import { trackFor } from './avail-placement.js';
import { ssaiError } from '../errors.js';
import type { HotSession, HotSessions } from './hot-sessions.js';
import { fail, json, playlist, type Reply } from './http-reply.js';
import { segmentExtension } from './playback-path.js';
import type { SessionStore } from '../store/session-store.js';

/** The asset list's URI as a media playlist at /v1/manifest/{guid}/{sid}/{n}.m3u8 names it: relative. */
export const relativeAssetListUri = (breakId: string): string => `assets/${encodeURIComponent(breakId)}.json`;

export class AssetRoutes {
  constructor(
    private readonly sessions: HotSessions,
    private readonly store: SessionStore,
    private readonly planner: Pick<AdPlanner, 'plan'>,
  ) {}

  /**
   * The answer to a guided break's asset list: this viewer's ads of it, each an HLS stream (`[]`: the content plays),
   * under `sessionBase` (the session's /v1/manifest URL, absolute: hls.js loads an asset URI as it is).
   */
  static assetList(sessionBase: string, record: AvailRecord): Reply {
    const base = `${sessionBase}/assets/${encodeURIComponent(record.id)}`;
    const ids = adIdsOf(record);
    // Keys beyond URI and DURATION are allowed per asset (HLS Interstitials): the ad's ids, as the stitched DATERANGE has them.
    const reply = json(200, { ASSETS: record.ads.map((ad, i) => ({
      URI: `${base}/${i}/master.m3u8`, DURATION: ad.duration,
      // a bumper (issue 31 item 3) is no ad: flagged, without ad ids
      ...(ad.bumper ? { 'X-BUMPER': ad.bumper } : ad.slate ? {} : {
        'X-AD-ID': ids[i] ?? '', ...(ad.creativeId ? { 'X-CREATIVE-ID': ad.creativeId } : {}),
        ...(ad.universalAdId ? { 'X-UNIVERSAL-AD-ID': ad.universalAdId } : {}), ...(ad.adSystem ? { 'X-AD-SYSTEM': ad.adSystem } : {}),
      }),
    })) });
    reply.headers = { 'cache-control': 'no-store' };
    return reply;
  }

  /**
   * GET /v1/manifest/{guid}/{sid}/assets/{breakId}/{adIndex}/{master|n}.m3u8; a media playlist's segments through the
   * configuration's ad_segment_prefix (`policy.adUri`), the playlists themselves on the engine.
   */
  async assetPlaylist(guid: string, sid: string, breakIdRaw: string, adIndexRaw: string, file: string, policy?: Pick<PlaylistPolicy, 'adUri'>): Promise<Reply> {
    const hot = await this.sessions.load(guid, sid);
    if ('kind' in hot) return fail(hot);
    let breakId: string;
    try {
      breakId = decodeURIComponent(breakIdRaw);
    } catch {
      return fail(ssaiError('BAD_PLAYBACK_PATH', 'the break id is not valid percent-encoding'));
    }
    const record = hot.records.find((r) => r.id === breakId) ?? await this.store.get<AvailRecord>(keys.avail(sid, breakId));
    const adIndex = /^\d{1,3}$/.test(adIndexRaw) ? Number(adIndexRaw) : -1;
    const ad = record?.ads[adIndex];
    const plan = ad ? await this.planner.plan(ad.creativeKey) : undefined;
    if (!record || !ad || !plan) return fail(ssaiError('SEGMENT_NOT_FOUND', 'the session has no ad at this address'));
    const segmentBase = `/v1/segment/${guid}/${sid}/${encodeURIComponent(record.id)}/${adIndex}`;
    if (file === 'master.m3u8') return playlist(assetMultivariant(hot, (e) => trackFor(plan, e)), false);
    const n = /^(\d{1,4})\.m3u8$/.exec(file);
    const entry = n ? hot.session.variants[Number(n[1])] : undefined;
    const track = entry ? trackFor(plan, entry) : undefined;
    if (!entry || !track) return fail(ssaiError('VARIANT_NOT_FOUND'));
    return playlist(assetMedia(track, `${segmentBase}/${entry.n}`, policy?.adUri ?? ((uri) => uri)), false);
  }
}

/**
 * The creative's multivariant playlist: one variant per creative rendition (named by the content variant it stands
 * for, whose segment route picks the same rendition), and the creative's audio as the group of a demuxed content.
 */
function assetMultivariant(hot: HotSession, trackOf: (entry: VariantEntry) => CreativeTrack | undefined): string {
  const variants = hot.session.variants;
  const audio = variants.find((v) => v.kind === 'audio');
  const audioTrack = audio ? trackOf(audio) : undefined;
  const lines = ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-INDEPENDENT-SEGMENTS'];
  if (audio && audioTrack) lines.push(`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="ad-audio",NAME="ad",DEFAULT=YES,AUTOSELECT=YES,URI="${audio.n}.m3u8"`);
  const listed = new Set<CreativeTrack>();
  for (const v of variants) {
    if (v.kind !== 'video') continue;
    const t = trackOf(v);
    if (!t || listed.has(t)) continue;
    listed.add(t);
    const size = t.width && t.height ? `,RESOLUTION=${t.width}x${t.height}` : '';
    lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${Math.max(1, Math.round(t.bandwidth))}${size}${audio && audioTrack ? ',AUDIO="ad-audio"' : ''}`, `${v.n}.m3u8`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * One rendition of a creative: its segments through the beacon-firing redirect at `segmentBase`/{index}{ext}, each
 * segment and the init segment as `adUri` lists them (a CDN prefix).
 */
function assetMedia(track: CreativeTrack, segmentBase: string, adUri: (uri: string) => string): string {
  const target = Math.max(1, Math.ceil(Math.max(...track.segments.map((s) => s.duration)) - 1e-6));
  const lines = ['#EXTM3U', `#EXT-X-VERSION:${track.mapUri ? 7 : 3}`, `#EXT-X-TARGETDURATION:${target}`, '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD'];
  if (track.mapUri) lines.push(`#EXT-X-MAP:URI="${adUri(track.mapUri)}"`);
  track.segments.forEach((s, i) => lines.push(`#EXTINF:${s.duration.toFixed(3)},`, adUri(`${segmentBase}/${i}${segmentExtension(s.uri)}`)));
  lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}
