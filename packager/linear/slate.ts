// The slate of virtual channels (a gap with nothing scheduled plays it): 8 s of a plain frame and silence in 4 s fMP4
// segments like the VOD encodes (an SSAI proxy takes the window's median segment as its slot length: slate must not
// change it), video and audio apart, written once under the media store where /media serves it.
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execTool } from '../../media/exec-tool.js';

export const SLATE_DIR = 'linear-slate/v3';

async function run(bin: string, args: string[]): Promise<void> {
  const out = await execTool(bin, args, 60_000);
  if (out.exitCode !== 0) throw new Error(`${bin}: ${out.stderr.slice(-1500) || `exit code ${out.exitCode}`}`);
}

/** Writes the slate (unless there) and answers its directory; several processes may race: the rename decides. */
export async function ensureSlate(mediaDir: string, ffmpeg = 'ffmpeg'): Promise<string> {
  const dir = path.join(mediaDir, SLATE_DIR);
  if (await stat(path.join(dir, 'master.m3u8')).then(() => true, () => false)) return dir;
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  await mkdir(tmp, { recursive: true });
  try {
    const hls = (name: string) => ['-f', 'hls', '-hls_time', '4', '-hls_playlist_type', 'vod', '-hls_segment_type', 'fmp4',
      '-hls_fmp4_init_filename', `${name}_init.mp4`, '-hls_segment_filename', path.join(tmp, `${name}_%d.m4s`), path.join(tmp, `${name}.m3u8`)];
    await run(ffmpeg, ['-hide_banner', '-nostdin', '-v', 'error', '-y',
      '-t', '8', '-f', 'lavfi', '-i', 'color=c=0x1c2541:s=320x180:r=25', '-t', '8', '-f', 'lavfi', '-i', 'anullsrc=r=48000:cl=stereo',
      '-map', '0:v', '-an', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-profile:v', 'high',
      '-force_key_frames', 'expr:gte(t,n_forced*4)', '-sc_threshold', '0', ...hls('video'),
      '-map', '1:a', '-vn', '-c:a', 'aac', '-b:a', '64k', '-ac', '2', '-ar', '48000', ...hls('audio')]);
    await writeFile(path.join(tmp, 'master.m3u8'), ['#EXTM3U', '#EXT-X-VERSION:7',
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="main",DEFAULT=YES,URI="audio.m3u8"',
      '#EXT-X-STREAM-INF:BANDWIDTH=150000,RESOLUTION=320x180,CODECS="avc1.64000d,mp4a.40.2",AUDIO="aud"', 'video.m3u8', ''].join('\n'));
    await mkdir(path.dirname(dir), { recursive: true });
    await rename(tmp, dir).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return dir;
}
