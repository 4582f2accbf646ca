// Builds the records of spec 2.12 by reading the encoded outputs back (m3u8-parser, mpd-parser, fs.stat, ffprobe),
// never from what the encoder meant to write.
import { createHash } from 'node:crypto';
import { access, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Parser, type M3u8Manifest } from 'm3u8-parser';
import { parse as parseMpd, type MpdPlaylist } from 'mpd-parser';
import { CMAF_DIR, DASH_MANIFEST_NAME, HLS_MASTER_NAME } from './encode.js';
import { failure, VodError, isVodError, type VodResult } from './errors.js';
import { execTool } from '../media/exec-tool.js';
import { ffprobeBin } from '../media/tool-paths.js';
import type {
  DashFormat, DashSegmentRecord, FormatsRecord, HlsFormat, HlsManifestRecord, HlsManifestSegment, HlsSegmentRecord,
  HlsVariant, Mp4Format, VodRecords,
} from './records.types.js';

export type * from './records.types.js';

export interface RecordsInput {
  /** Directory of a finished encode (encodeVod's outDir). */
  outDir: string;
  sourceGuid: string;
  /** Public base URL of this source's outputs, e.g. `http://host/media/vod/<guid>`. */
  cdnBase: string;
  destBucket: string;
  /** Storage key prefix of this source's outputs; `vod/<guid>` by default. */
  keyPrefix?: string;
}

/** Stable UUID-shaped id from the source guid and a name, so re-reading the outputs yields the same guids. */
export function derivedGuid(sourceGuid: string, name: string): string {
  const h = createHash('sha1').update(`${sourceGuid}:${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80)
    .toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

async function readM3u8(file: string): Promise<M3u8Manifest> {
  const parser = new Parser();
  parser.push(await readFile(file, 'utf8'));
  parser.end();
  return parser.manifest;
}

function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new VodError('VOD_OUTPUT_INVALID', what);
  return value;
}

interface Mp4Probe {
  duration: number;
  bitRate: number;
  width: number;
  height: number;
}
async function probeMp4(file: string): Promise<Mp4Probe> {
  const out = await execTool(ffprobeBin(), ['-v', 'error', '-select_streams', 'v:0', '-show_entries',
    'format=duration,bit_rate:stream=width,height', '-print_format', 'json', file], 60_000);
  if (out.exitCode !== 0) throw new VodError('VOD_OUTPUT_INVALID', `ffprobe ${path.basename(file)}: ${out.stderr.trim()}`);
  const j = JSON.parse(out.stdout) as { format?: { duration?: string; bit_rate?: string }; streams?: Array<{ width?: number; height?: number }> };
  const s = j.streams?.[0];
  return {
    duration: Number(must(j.format?.duration, 'mp4 duration')),
    bitRate: Number(must(j.format?.bit_rate, 'mp4 bit rate')),
    width: must(s?.width, 'mp4 width'),
    height: must(s?.height, 'mp4 height'),
  };
}

const exists = (f: string): Promise<boolean> => access(f).then(() => true, () => false);

export async function buildRecords(input: RecordsInput): Promise<VodResult<VodRecords>> {
  try {
    return { ok: true, value: await readRecords(input) };
  } catch (e) {
    if (isVodError(e)) return { ok: false, error: e.toFailure() };
    return failure('VOD_OUTPUT_INVALID', e instanceof Error ? e.message : String(e));
  }
}

async function readRecords(input: RecordsInput): Promise<VodRecords> {
  const { outDir, sourceGuid, destBucket } = input;
  const base = input.cdnBase.replace(/\/+$/, '');
  const prefix = (input.keyPrefix ?? `vod/${sourceGuid}`).replace(/\/+$/, '');
  const url = (rel: string): string => `${base}/${rel}`;
  const key = (rel: string): string => `${prefix}/${rel}`;
  const cmaf = path.join(outDir, CMAF_DIR);
  const rel = (name: string): string => `${CMAF_DIR}/${name}`;

  // DASH first: it carries the video-only bandwidth and frame rate that the HLS master lacks.
  const mpdRel = rel(DASH_MANIFEST_NAME);
  const mpd = parseMpd(await readFile(path.join(cmaf, DASH_MANIFEST_NAME), 'utf8'), { manifestUri: url(mpdRel) });
  const reps = mpd.playlists.filter((p) => p.attributes.RESOLUTION);
  if (reps.length === 0) throw new VodError('VOD_OUTPUT_INVALID', 'MPD has no video Representation');
  const repByHeight = new Map<number, MpdPlaylist>(reps.map((p) => [must(p.attributes.RESOLUTION, 'res').height, p]));

  const master = await readM3u8(path.join(cmaf, HLS_MASTER_NAME));
  const refs = master.playlists ?? [];
  if (refs.length === 0) throw new VodError('VOD_OUTPUT_INVALID', 'HLS master has no variants');

  const hlsManifests: Record<string, HlsManifestRecord> = {};
  const variants: HlsVariant[] = [];
  const perVariant: Array<{ label: string; media: M3u8Manifest }> = [];
  for (const ref of refs) {
    const res = must(ref.attributes.RESOLUTION, `RESOLUTION of ${ref.uri}`);
    const bandwidth = must(ref.attributes.BANDWIDTH, `BANDWIDTH of ${ref.uri}`);
    const mediaType = `hls_manifest_${res.height}_${bandwidth}` as const;
    const label = `${res.height}_${bandwidth}`;
    const media = await readM3u8(path.join(cmaf, ref.uri));
    const rep = must(repByHeight.get(res.height), `DASH Representation of height ${res.height}`);
    variants.push({ path: ref.uri, bitRate: String(bandwidth), cdnUrl: url(rel(ref.uri)), filePath: key(rel(ref.uri)),
      width: res.width, height: res.height, mediaType });
    perVariant.push({ label, media });

    let offset = 0;
    let bytes = 0;
    const segments: HlsManifestSegment[] = [];
    const offsets: number[] = [];
    const mediaSequence = must(media.mediaSequence, `MEDIA-SEQUENCE of ${ref.uri}`);
    for (const [i, seg] of media.segments.entries()) {
      const size = (await stat(path.join(cmaf, seg.uri))).size;
      bytes += size;
      const n = mediaSequence + i;
      offsets.push(round3(offset));
      segments.push({
        fileName: seg.uri, offset: round3(offset), destBucket, cdnUrl: url(rel(seg.uri)), filePath: key(rel(seg.uri)),
        mediaType: `hls_segments_${n}`, mediaSequence: n, duration: seg.duration, number: String(n),
        discontinuityStarts: [...media.discontinuityStarts], bitRate: Math.round((size * 8) / seg.duration),
        endList: media.endList === true, guid: derivedGuid(sourceGuid, `${mediaType}/${seg.uri}`),
        playlistType: must(media.playlistType, `PLAYLIST-TYPE of ${ref.uri}`), timeline: seg.timeline ?? 0,
        targetDuration: must(media.targetDuration, 'TARGETDURATION'), discontinuitySequence: media.discontinuitySequence ?? 0,
        key: key(rel(seg.uri)), height: res.height,
      });
      offset += seg.duration;
    }
    hlsManifests[mediaType] = {
      destBucket, fileName: ref.uri, mediaType, videoBitRate: must(rep.attributes.BANDWIDTH, 'Representation bandwidth'),
      segmentsInfo: { mediaTypeKey: 'hls_segments', hlsSegmentOffsets: offsets, segmentsCount: segments.length, segments },
      cdnUrl: url(rel(ref.uri)), filePath: key(rel(ref.uri)),
      frameRate: must(rep.attributes['FRAME-RATE'], 'Representation frame rate'), guid: derivedGuid(sourceGuid, mediaType),
      bitRate: bandwidth, width: res.width, height: res.height,
      averageBitrate: offset > 0 ? Math.round((bytes * 8) / offset) : 0, key: key(rel(ref.uri)),
      codecs: must(ref.attributes.CODECS, `CODECS of ${ref.uri}`),
    };
  }

  const hlsSegments = hlsSegmentRecords(perVariant, { sourceGuid, destBucket, prefix: url(`${CMAF_DIR}/`), url, rel });
  const hls: HlsFormat = {
    destBucket, mediaType: 'hls_master', guid: derivedGuid(sourceGuid, 'hls_master'), variants, hlsName: HLS_MASTER_NAME,
    cdnUrl: url(rel(HLS_MASTER_NAME)), filePath: key(rel(HLS_MASTER_NAME)), hlsPath: key(CMAF_DIR),
  };

  const dashSegments: Record<string, DashSegmentRecord[]> = {};
  const dashVariants: DashFormat['variants'] = [];
  for (const rep of reps) {
    const res = must(rep.attributes.RESOLUTION, 'Representation resolution');
    const bandwidth = must(rep.attributes.BANDWIDTH, 'Representation bandwidth');
    const mediaType = `dash_playlist_${res.height}_${bandwidth}` as const;
    const first = must(rep.segments[0], `segments of Representation ${res.height}`);
    const init = must(first.map, `initialization of Representation ${res.height}`);
    dashVariants.push({ width: res.width, height: res.height, bitRate: bandwidth, mediaType,
      cdnUrl: init.resolvedUri, filePath: key(rel(init.uri)) });
    dashSegments[mediaType] = rep.segments.map((seg, i): DashSegmentRecord => {
      const number = i + 1; // SegmentTemplate@startNumber is 1; mpd-parser counts from 0.
      const segInit = seg.map ?? init;
      return {
        destBucket, fileName: seg.uri, mediaType: `dash_segment_${res.height}_${bandwidth}_${number}`,
        initBucketPath: `${destBucket}/${key(rel(segInit.uri))}`, endList: rep.endList, cdnUrl: seg.resolvedUri,
        filePath: key(rel(seg.uri)), mediaSequence: rep.mediaSequence + i, initCdnUrl: segInit.resolvedUri,
        guid: derivedGuid(sourceGuid, `${mediaType}/${seg.uri}`), mapKey: key(rel(segInit.uri)), number,
        initFilePath: key(rel(segInit.uri)), programId: rep.attributes['PROGRAM-ID'] ?? 1, bitRate: bandwidth,
        width: res.width, height: res.height, targetDuration: rep.targetDuration, duration: seg.duration,
        initFileName: segInit.uri, codecs: must(rep.attributes.CODECS, 'Representation codecs'), timeline: seg.timeline,
      };
    });
  }
  const dash: DashFormat = {
    destBucket, mediaType: 'dash_manifest', guid: derivedGuid(sourceGuid, 'dash_manifest'), variants: dashVariants,
    cdnUrl: url(mpdRel), filePath: key(mpdRel), dashPath: key(CMAF_DIR), dashName: DASH_MANIFEST_NAME,
  };

  const mp4: Mp4Format[] = [];
  const mp4Dir = path.join(outDir, 'mp4');
  const mp4Names = (await exists(mp4Dir)) ? (await readdir(mp4Dir)).filter((n) => n.endsWith('.mp4')) : [];
  for (const name of mp4Names) {
    const file = path.join(mp4Dir, name);
    const p = await probeMp4(file);
    const r = `mp4/${name}`;
    mp4.push({ size: (await stat(file)).size, fileName: name, mediaType: `mp4_output_${p.height}`,
      guid: derivedGuid(sourceGuid, `mp4_output_${p.height}`), bitRate: p.bitRate, width: p.width, height: p.height,
      cdnUrl: url(r), filePath: key(r), bucket: destBucket, key: key(r), duration: p.duration });
  }
  mp4.sort((a, b) => b.height - a.height);

  const thumbFiles = ['thumbs/poster.jpg', 'thumbs/sprite.jpg', 'thumbs/thumbs.vtt'];
  const hasThumbs = (await Promise.all(thumbFiles.map((f) => exists(path.join(outDir, f))))).every(Boolean);
  const formats: FormatsRecord = { hasHls: variants.length > 0, hls, hasDash: dashVariants.length > 0, dash,
    hasMp4: mp4.length > 0, mp4, hasThumbs };
  return {
    formats, hlsManifests, hlsSegments, dashSegments,
    thumbs: hasThumbs ? { posterUrl: url(thumbFiles[0]!), spriteUrl: url(thumbFiles[1]!), thumbsVttUrl: url(thumbFiles[2]!) } : null,
    durationSec: mp4[0]?.duration ?? mpd.duration,
  };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** Segment N of every variant in one record, keyed `<height>_<bitrate>`. */
function hlsSegmentRecords(
  perVariant: Array<{ label: string; media: M3u8Manifest }>,
  ctx: { sourceGuid: string; destBucket: string; prefix: string; url: (r: string) => string; rel: (n: string) => string },
): HlsSegmentRecord[] {
  const lead = must(perVariant[0], 'a variant').media;
  const records: HlsSegmentRecord[] = [];
  let offset = 0;
  for (const [i, seg] of lead.segments.entries()) {
    const n = (lead.mediaSequence ?? 0) + i;
    const segments: Record<string, string> = {};
    for (const v of perVariant) {
      const s = must(v.media.segments[i], `segment ${i} of variant ${v.label}`);
      segments[v.label] = ctx.url(ctx.rel(s.uri));
    }
    records.push({
      destBucket: ctx.destBucket, segments, mediaType: `hls_segments_${n}`, guid: derivedGuid(ctx.sourceGuid, `hls_segments_${n}`),
      playlistType: must(lead.playlistType, 'PLAYLIST-TYPE'), discontinuitySequence: lead.discontinuitySequence ?? 0,
      offset: round3(offset), prefix: ctx.prefix, targetDuration: must(lead.targetDuration, 'TARGETDURATION'),
      duration: seg.duration, isFirst: i === 0, mediaSequence: n,
    });
    offset += seg.duration;
  }
  return records;
}
