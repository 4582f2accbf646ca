// Poster JPEG and a thumbnail sprite with its WebVTT track (`sprite.jpg#xywh=x,y,w,h`), made from an encoded MP4.
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ffmpegOnce } from './ffmpeg-runner.js';
import { even } from './ladder.js';
import { failure, type VodResult } from './errors.js';

export interface SpriteLayout {
  tiles: number;
  columns: number;
  rows: number;
  tileWidth: number;
  tileHeight: number;
  intervalSec: number;
}

export function spriteLayout(durationSec: number, width: number, height: number, intervalSec = 2, tileWidth = 160): SpriteLayout {
  const tiles = Math.max(1, Math.ceil(durationSec / intervalSec));
  const columns = Math.min(tiles, 10);
  return { tiles, columns, rows: Math.ceil(tiles / columns), tileWidth, tileHeight: even((tileWidth * height) / width), intervalSec };
}

/** WebVTT timestamp `hh:mm:ss.mmm`. */
export function vttTime(sec: number): string {
  const ms = Math.round(sec * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

/** The WebVTT thumbnails track: one cue per tile pointing into the sprite by media fragment. */
export function spriteVtt(layout: SpriteLayout, durationSec: number, spriteName: string): string {
  const cues: string[] = ['WEBVTT', ''];
  for (let i = 0; i < layout.tiles; i++) {
    const start = i * layout.intervalSec;
    const end = Math.min((i + 1) * layout.intervalSec, durationSec);
    const x = (i % layout.columns) * layout.tileWidth;
    const y = Math.floor(i / layout.columns) * layout.tileHeight;
    cues.push(`${vttTime(start)} --> ${vttTime(end)}`, `${spriteName}#xywh=${x},${y},${layout.tileWidth},${layout.tileHeight}`, '');
  }
  return cues.join('\n');
}

/** ffmpeg exits 0 when a seek lands past the last frame and writes nothing: check the file, not the exit code. */
async function written(file: string): Promise<boolean> {
  return stat(file).then((s) => s.size > 0, () => false);
}

/** poster.jpg at 10% in (max 5 s), since the first frame of real content is often black; `source` should be an MP4. */
export async function makePoster(source: string, file: string, durationSec: number, signal?: AbortSignal): Promise<VodResult<string>> {
  const at = Math.min(durationSec * 0.1, 5).toFixed(3);
  const p = await ffmpegOnce(['-v', 'error', '-ss', at, '-i', source, '-frames:v', '1', '-q:v', '3', file], 'VOD_ENCODE_FAILED', signal);
  if (!p.ok) return p;
  return (await written(file)) ? { ok: true, value: file } : failure('VOD_ENCODE_FAILED', `no poster frame at ${at} s`);
}

/** sprite.jpg (one tile every 2 s, 160 px wide, 10 per row) and thumbs.vtt in `dir`; reads the whole `source`. */
export async function makeSprite(source: string, dir: string, media: { durationSec: number; width: number; height: number },
  signal?: AbortSignal): Promise<VodResult<{ sprite: string; vtt: string; layout: SpriteLayout }>> {
  const sprite = path.join(dir, 'sprite.jpg');
  const vtt = path.join(dir, 'thumbs.vtt');
  const layout = spriteLayout(media.durationSec, media.width, media.height);
  const vf = `fps=1/${layout.intervalSec},scale=${layout.tileWidth}:${layout.tileHeight},setsar=1,`
    + `tile=${layout.columns}x${layout.rows}`;
  const s = await ffmpegOnce(['-v', 'error', '-i', source, '-an', '-vf', vf, '-frames:v', '1', '-q:v', '4', sprite],
    'VOD_ENCODE_FAILED', signal);
  if (!s.ok) return s;
  if (!(await written(sprite))) return failure('VOD_ENCODE_FAILED', 'the sprite has no frame');
  await writeFile(vtt, spriteVtt(layout, media.durationSec, 'sprite.jpg'));
  return { ok: true, value: { sprite, vtt, layout } };
}
