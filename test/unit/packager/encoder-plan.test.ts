// Blueprint encoderSettings → the channel's encoder plan (renditions, HLS group, archive, RTMP outputs).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChannelSpec } from '../../../kernel/seams/channel-runtime.js';
import { buildEncoderPlan, codecsOf, encodedRenditions } from '../../../packager/encode/encoder-plan.js';

function spec(id: string, edit?: (channel: Record<string, any>) => void, archive = false): ChannelSpec {
  const blueprint = JSON.parse(fs.readFileSync(`fixtures/blueprints/${id}.json`, 'utf8')) as ChannelSpec['blueprint'];
  const channel = Object.values(blueprint.components).find((c) => c.channel)!.channel as Record<string, any>;
  edit?.(channel);
  return { workflowId: 'w', organizationId: 'o', region: 'local', blueprint, inputWhitelistCIDRs: [], archive: { enabled: archive, defaultArchiveGroup: archive }, activeInput: 'x' };
}

describe('encoder plan', () => {
  it('reads the catalog ladder: renditions in output order, segment length, codecs', () => {
    const plan = buildEncoderPlan(spec('rtmp-push-abr'));
    expect(plan.renditions.map((r) => [r.id, r.width, r.height, r.videoBitrate, r.gopFrames])).toEqual([
      ['1080p', 1920, 1080, expect.any(Number), 60], ['720p', 1280, 720, 3_000_000, 60], ['480p', 854, 480, expect.any(Number), 60],
    ]);
    expect(plan.hls).toEqual({ destinationId: 'hls-origin', segmentSeconds: 6, segmentType: 'ts' });
    expect(codecsOf(plan.renditions[1]!)).toBe('avc1.64001f,mp4a.40.2');
    expect(plan.archiveRenditionId).toBeUndefined();
  });

  it('archives the top rendition for the default archive group, and PUTs to a real CDN URL', () => {
    const plan = buildEncoderPlan(spec('srt-push', (channel) => { channel.destinations[0].settings[0].url = 'https://cdn.example.com/in/ch/master.m3u8'; }, true));
    expect(plan.archiveRenditionId).toBe('720p');
    expect(plan.hls.putUrl).toBe('https://cdn.example.com/in/ch/master.m3u8');
  });

  it('records what an archive group names: a rung of the ladder, or a picture of its own encoded for the archive only', () => {
    const archiveGroup = (videoDescriptionName: string) => (channel: Record<string, any>) => {
      const output = (modifier: string, video: string) => ({ videoDescriptionName: video, audioDescriptionNames: ['audio_aac'], outputSettings: { archiveOutputSettings: { nameModifier: modifier } } });
      channel.encoderSettings.videoDescriptions.push({ ...channel.encoderSettings.videoDescriptions[0], name: 'video_archive', width: 640, height: 360 });
      // the `1/` pipeline is listed first: the one pipeline here records the `0/` output
      channel.encoderSettings.outputGroups.push({ outputGroupSettings: { archiveGroupSettings: {} }, outputs: [output('1/$w$x$h$$rc$', 'video_720p'), output('0/$w$x$h$$rc$', videoDescriptionName)] });
    };
    const rung = buildEncoderPlan(spec('rtmp-push-abr', archiveGroup('video_480p'), true));
    expect(rung.archiveRenditionId).toBe('480p');
    expect(rung.archiveOnly).toBeUndefined();
    expect(encodedRenditions(rung)).toBe(rung.renditions);
    const own = buildEncoderPlan(spec('rtmp-push-abr', archiveGroup('video_archive'), true));
    expect(own.renditions.map((r) => r.id)).toEqual(['1080p', '720p', '480p']);
    expect(own.archiveOnly).toMatchObject({ id: 'archive', width: 640, height: 360 });
    expect(own.archiveRenditionId).toBe('archive');
    expect(encodedRenditions(own).map((r) => r.id)).toEqual(['1080p', '720p', '480p', 'archive']);
    // createArchives false: the groups were removed upstream, and nothing is recorded
    expect(buildEncoderPlan(spec('rtmp-push-abr', archiveGroup('video_archive'), false)).archiveOnly).toBeUndefined();
    expect(() => buildEncoderPlan(spec('rtmp-push-abr', archiveGroup('video_gone'), true))).toThrow(/archive output names videoDescriptionName video_gone/);
  });

  it('names what is wrong: a missing HLS group, an unknown video description, an RTMP output without a URL', () => {
    expect(() => buildEncoderPlan(spec('srt-push', (channel) => { channel.encoderSettings.outputGroups = [{ name: 'x', outputGroupSettings: { archiveGroupSettings: {} }, outputs: [] }]; })))
      .toThrow(/no HLS output group/);
    expect(() => buildEncoderPlan(spec('srt-push', (channel) => { channel.encoderSettings.outputGroups[0].outputs[0].videoDescriptionName = 'nope'; })))
      .toThrow(/videoDescriptionName nope/);
    expect(() => buildEncoderPlan(spec('srt-push', (channel) => {
      channel.encoderSettings.outputGroups.push({ outputGroupSettings: { rtmpGroupSettings: {} }, outputs: [{ outputSettings: { rtmpOutputSettings: { destination: { destinationRefId: 'gone' } } } }] });
    }))).toThrow(/RTMP output names destination gone/);
  });
});
