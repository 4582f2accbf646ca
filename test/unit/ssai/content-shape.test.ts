import { describe, expect, it } from 'vitest';
import { ContentShapes, containerOf, h264Of } from '../../../ssai/stitch/content-shape.js';
import { scanMediaPlaylist, type MediaPlaylist } from '../../../media/playlist-scanner.js';
import type { VariantEntry } from '../../../ssai/stitch/manifest-rewriter.js';

const media = (text: string): MediaPlaylist => scanMediaPlaylist(`#EXTM3U\n#EXT-X-TARGETDURATION:2\n${text}`).playlist!;

describe('content shape', () => {
  it('reads the H.264 profile and level of a CODECS string', () => {
    expect(h264Of('avc1.42c01e,mp4a.40.2')).toEqual({ profile: 'baseline', level: '3.0' });
    expect(h264Of('mp4a.40.2,avc1.4d401f')).toEqual({ profile: 'main', level: '3.1' });
    expect(h264Of('avc1.640028')).toEqual({ profile: 'high', level: '4.0' });
    expect(h264Of('hvc1.1.6.L93.B0')).toBeUndefined();
    expect(h264Of(undefined)).toBeUndefined();
  });

  it('tells MPEG-TS content from fMP4 content', () => {
    expect(containerOf(media('#EXTINF:2,\nseg-1.ts\n'))).toBe('ts');
    expect(containerOf(media('#EXTINF:2,\nseg-1?x=.m4s\n'))).toBe('ts');
    expect(containerOf(media('#EXT-X-MAP:URI="init.mp4"\n#EXTINF:2,\nseg-1.m4s\n'))).toBe('fmp4');
    expect(containerOf(media('#EXTINF:2,\nseg-1.cmfv\n'))).toBe('fmp4');
  });

  it('is muxed without an audio rendition, demuxed with one, and takes the probed audio rate and channels', async () => {
    const probed: string[] = [];
    const shapes = new ContentShapes({
      playlist: async (uri) => media(uri.includes('audio') ? '#EXT-X-MAP:URI="a-init.mp4"\n#EXTINF:2,\na-1.m4s\n' : '#EXTINF:2,\nv-1.ts\n'),
      probe: async (uri, map) => {
        probed.push(`${uri} ${map ?? ''}`);
        return { audio: { codec: 'aac', sampleRate: uri.includes('a-1') ? 48_000 : 44_100, channels: 1 } };
      },
    });
    const video: VariantEntry = { n: 0, kind: 'video', uri: 'http://o/v.m3u8' };
    expect(await shapes.shapeOf([video])).toEqual({ container: 'ts', muxedAudio: true, audioSampleRate: 44_100, audioChannels: 1 });
    const grouped: VariantEntry = { ...video, audioGroup: 'aud' };
    const audio: VariantEntry = { n: 1, kind: 'audio', uri: 'http://o/audio.m3u8', groupId: 'aud', channels: 2 };
    expect(await shapes.shapeOf([grouped, audio])).toEqual({ container: 'ts', muxedAudio: false, audioSampleRate: 48_000, audioChannels: 1 });
    // once per origin playlist
    await shapes.shapeOf([video]);
    expect(probed).toEqual(['http://o/v-1.ts ', 'http://o/a-1.m4s http://o/a-init.mp4']);
  });
});
