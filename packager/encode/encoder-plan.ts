// Turns a blueprint's `encoderSettings` (the encoder service's own create-channel keys, spec 2.1) into the one
// ABR ladder a channel's ffmpeg encodes. Unknown keys are ignored; settings we cannot honour fail the start.
import type { ChannelSpec } from '../../kernel/seams/channel-runtime.js';

export interface VideoRendition {
  /** name used in file names: the output's nameModifier without its leading `_`, or its index */
  id: string;
  width: number;
  height: number;
  /** bits per second */
  videoBitrate: number;
  profile: 'baseline' | 'main' | 'high';
  frameRate: number;
  /** frames per GOP */
  gopFrames: number;
  audioBitrate: number;
  audioSampleRate: number;
  audioChannels: number;
}

export interface HlsGroupPlan {
  /** the destination the group publishes to (spec 2.1 destinations[].id) */
  destinationId: string;
  /**
   * A generic CDN's ingest URL of the multivariant playlist: every file is also sent there by HTTP PUT. Absent when the
   * destination names no URL or the catalog's placeholder host `origin.local` (the engine's own origin only).
   */
  putUrl?: string;
  segmentSeconds: number;
  segmentType: 'ts' | 'fmp4';
}

export interface EncoderPlan {
  renditions: VideoRendition[];
  hls: HlsGroupPlan;
  /** spec 3.3: rendition recorded by the archive, when archiving */
  archiveRenditionId?: string;
  /** the archive's own rendition when its output names a picture the HLS ladder does not have (no playlist, not offered) */
  archiveOnly?: VideoRendition;
  /** RTMP push outputs (rendition id → URL) */
  rtmp: Array<{ destinationId: string; renditionId: string; url: string }>;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const num = (value: unknown, fallback: number): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback);
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export class EncoderPlanError extends Error {
  override name = 'EncoderPlanError';
}

/** The section of the blueprint that holds the channel (validated to exist exactly once by the control plane). */
export function channelSettings(spec: ChannelSpec): Json {
  for (const section of Object.values(spec.blueprint.components)) if (section.channel) return section.channel;
  throw new EncoderPlanError('the blueprint has no channel section');
}

function profileOf(value: unknown): VideoRendition['profile'] {
  const p = String(value ?? 'HIGH').toUpperCase();
  return p.startsWith('BASE') ? 'baseline' : p === 'MAIN' ? 'main' : 'high';
}

/** Every rendition the channel's ffmpeg encodes: the HLS ladder, then the archive-only one (ffmpeg's top is the first). */
export function encodedRenditions(plan: EncoderPlan): VideoRendition[] {
  return plan.archiveOnly ? [...plan.renditions, plan.archiveOnly] : plan.renditions;
}

export function buildEncoderPlan(spec: ChannelSpec): EncoderPlan {
  const channel = channelSettings(spec);
  const settings = obj(channel.encoderSettings);
  const videos = new Map(arr(settings.videoDescriptions).map((v) => [str(obj(v).name) ?? '', obj(v)]));
  const audios = new Map(arr(settings.audioDescriptions).map((a) => [str(obj(a).name) ?? '', obj(a)]));
  const groups = arr(settings.outputGroups).map(obj);
  const hlsGroup = groups.find((g) => 'hlsGroupSettings' in obj(g.outputGroupSettings));
  if (!hlsGroup) throw new EncoderPlanError('encoderSettings.outputGroups has no HLS output group (hlsGroupSettings); an HLS group is required');
  const hlsSettings = obj(obj(hlsGroup.outputGroupSettings).hlsGroupSettings);
  const destinationId = str(obj(hlsSettings.destination).destinationRefId);
  if (!destinationId) throw new EncoderPlanError('the HLS output group names no destination.destinationRefId');
  const segmentSeconds = Math.min(30, Math.max(1, Math.round(num(hlsSettings.segmentLength, 6))));
  const destinations = new Map(arr(channel.destinations).map((d) => [str(obj(d).id) ?? '', obj(d)]));
  const hlsTarget = str(obj(arr(destinations.get(destinationId)?.settings)[0]).url);
  let putUrl: string | undefined;
  if (hlsTarget) {
    let parsed: URL;
    try {
      parsed = new URL(hlsTarget);
    } catch {
      throw new EncoderPlanError(`destination ${destinationId} has a url that is not a URL: ${hlsTarget}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new EncoderPlanError(`the HLS destination ${destinationId} takes an http(s) url, not ${parsed.protocol}`);
    if (parsed.hostname !== 'origin.local') putUrl = parsed.toString();
  }

  /** One output (HLS or archive) → its rendition: picture from its video description, sound from its first audio one. */
  const renditionOf = (output: Json, label: string, id: string): VideoRendition => {
    const videoName = str(output.videoDescriptionName);
    const video = videoName ? videos.get(videoName) : undefined;
    if (!video) throw new EncoderPlanError(`${label} names videoDescriptionName ${videoName ?? '(none)'} that no videoDescriptions entry has`);
    const audioName = str(arr(output.audioDescriptionNames)[0]);
    const audio = audioName ? audios.get(audioName) : undefined;
    if (audioName && !audio) throw new EncoderPlanError(`${label} names audio description ${audioName} that audioDescriptions does not have`);
    const h264 = obj(obj(video.codecSettings).h264Settings);
    const aac = obj(obj(audio?.codecSettings).aacSettings);
    const frameRate = num(h264.framerateNumerator, 30) / num(h264.framerateDenominator, 1);
    const gopSize = num(h264.gopSize, 2);
    const gopFrames = String(h264.gopSizeUnits ?? 'SECONDS').toUpperCase() === 'FRAMES' ? Math.round(gopSize) : Math.round(gopSize * frameRate);
    return {
      id, width: Math.round(num(video.width, 1280) / 2) * 2, height: Math.round(num(video.height, 720) / 2) * 2,
      videoBitrate: num(h264.bitrate, 2_000_000), profile: profileOf(h264.profile), frameRate, gopFrames: Math.max(1, gopFrames),
      audioBitrate: num(aac.bitrate, 128_000), audioSampleRate: num(aac.sampleRate, 48_000),
      audioChannels: String(aac.codingMode ?? 'CODING_MODE_2_0').includes('1_0') ? 1 : 2,
    };
  };

  const renditions: VideoRendition[] = [];
  let fmp4 = false;
  arr(hlsGroup.outputs).map(obj).forEach((output, index) => {
    const hlsOutput = obj(obj(output.outputSettings).hlsOutputSettings);
    if ('fmp4HlsSettings' in obj(hlsOutput.hlsSettings)) fmp4 = true;
    const id = (str(hlsOutput.nameModifier) ?? `_${index}`).replace(/^_+/, '').replace(/[^A-Za-z0-9-]/g, '') || String(index);
    if (renditions.some((r) => r.id === id)) throw new EncoderPlanError(`two HLS outputs share the nameModifier ${id}`);
    renditions.push(renditionOf(output, `HLS output ${index}`, id));
  });
  if (renditions.length === 0) throw new EncoderPlanError('the HLS output group has no outputs');

  // Spec 3.3: the archive records what its group's output names (the `0/` pipeline's output: one pipeline runs here),
  // else the top HLS rendition (the default group, or an output naming no picture). An output whose video description
  // the HLS ladder does not use is encoded as well, for the archive only.
  let archiveRenditionId: string | undefined;
  let archiveOnly: VideoRendition | undefined;
  if (spec.archive.enabled) {
    const archiveGroup = groups.find((g) => 'archiveGroupSettings' in obj(g.outputGroupSettings));
    const outputs = arr(archiveGroup?.outputs).map(obj);
    const output = outputs.find((o) => String(obj(obj(o.outputSettings).archiveOutputSettings).nameModifier ?? '').startsWith('0/')) ?? outputs[0];
    const named = str(output?.videoDescriptionName);
    const fromGroup = named ? arr(hlsGroup.outputs).map(obj).findIndex((o) => o.videoDescriptionName === named) : -1;
    if (output && named && fromGroup < 0) {
      let id = 'archive';
      while (renditions.some((r) => r.id === id)) id = `${id}-only`;
      archiveOnly = renditionOf(output, 'the archive output', id);
      archiveRenditionId = id;
    } else archiveRenditionId = renditions[fromGroup >= 0 ? fromGroup : 0]?.id;
  }

  const rtmp: EncoderPlan['rtmp'] = [];
  for (const group of groups.filter((g) => 'rtmpGroupSettings' in obj(g.outputGroupSettings))) {
    for (const output of arr(group.outputs).map(obj)) {
      const ref = str(obj(obj(obj(output.outputSettings).rtmpOutputSettings).destination).destinationRefId);
      const destination = ref ? destinations.get(ref) : undefined;
      const target = obj(arr(destination?.settings)[0]);
      const url = str(target.url);
      if (!ref || !url) throw new EncoderPlanError(`an RTMP output names destination ${ref ?? '(none)'} without a url`);
      const videoName = str(output.videoDescriptionName);
      const index = arr(hlsGroup.outputs).map(obj).findIndex((o) => o.videoDescriptionName === videoName);
      const streamName = str(target.streamName);
      rtmp.push({ destinationId: ref, renditionId: renditions[Math.max(0, index)]!.id, url: streamName ? `${url.replace(/\/+$/, '')}/${streamName}` : url });
    }
  }
  return {
    renditions, hls: { destinationId, segmentSeconds, segmentType: fmp4 ? 'fmp4' : 'ts', ...(putUrl ? { putUrl } : {}) },
    ...(archiveRenditionId ? { archiveRenditionId } : {}), ...(archiveOnly ? { archiveOnly } : {}), rtmp,
  };
}

/** RFC 6381 codec string of a rendition (the level follows from the picture rate, as x264 picks it). */
export function codecsOf(r: VideoRendition): string {
  const profile = r.profile === 'baseline' ? '42e0' : r.profile === 'main' ? '4d40' : '6400';
  const macroblocksPerSecond = Math.ceil(r.width / 16) * Math.ceil(r.height / 16) * r.frameRate;
  const level = macroblocksPerSecond <= 40_500 ? 0x1e : macroblocksPerSecond <= 108_000 ? 0x1f : macroblocksPerSecond <= 245_760 ? 0x28 : 0x2a;
  return `avc1.${profile}${level.toString(16).padStart(2, '0')},mp4a.40.2`;
}

/** x264 level matching codecsOf, so the CODECS attribute tells the truth. */
export function x264Level(r: VideoRendition): string {
  const codec = codecsOf(r).slice(9, 11);
  return ({ '1e': '3.0', '1f': '3.1', '28': '4.0', '2a': '4.2' } as Record<string, string>)[codec] ?? '4.0';
}
