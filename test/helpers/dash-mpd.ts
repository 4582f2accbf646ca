// A multi-Period MPD as tests read it (issue 33): its Periods, AdaptationSets and Representations with their
// SegmentTemplate expanded to segment URLs; and ffmpeg's decode of one Representation of a Period (init + segments).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { childrenNamed, parseIsoDuration } from '../../ssai/parse/mpd-reader.js';
import { ffmpegDecode } from './hls-decode.js';

export type TestRepresentation = {
  id: string; codecs?: string; width?: number; height?: number; bandwidth: number;
  timescale: number; presentationTimeOffset: number; startNumber: number;
  init?: string; segments: Array<{ url: string; t: number; d: number }>;
};
export type TestAdaptationSet = { id: string; contentType: string; lang?: string; mimeType?: string; representations: TestRepresentation[] };
export type TestPeriod = { id: string; start: number; duration: number; baseUrl?: string; sets: TestAdaptationSet[] };
export type TestMpd = { type: string; duration: number; periods: TestPeriod[] };

const fill = (template: string, rep: string, n: number, t: number): string => template
  .replace(/\$RepresentationID\$/g, rep)
  .replace(/\$Number(%0(\d+)d)?\$/g, (_m, _f, w: string | undefined) => String(n).padStart(Number(w ?? 0), '0'))
  .replace(/\$Time\$/g, String(t))
  .replace(/\$\$/g, '$');

function representationOf(rep: Element, base: string, periodSeconds: number): TestRepresentation {
  const tpl = childrenNamed(rep, 'SegmentTemplate')[0];
  if (!tpl) return { id: rep.getAttribute('id') ?? '', bandwidth: Number(rep.getAttribute('bandwidth')), timescale: 1, presentationTimeOffset: 0, startNumber: 0, segments: [] };
  const id = rep.getAttribute('id') ?? '';
  const startNumber = Number(tpl.getAttribute('startNumber') ?? 1);
  const media = tpl.getAttribute('media') ?? '';
  const segments: TestRepresentation['segments'] = [];
  let t = 0;
  let n = startNumber;
  const timeline = childrenNamed(tpl, 'SegmentTimeline')[0];
  const timescale = Number(tpl.getAttribute('timescale') ?? 1);
  const every = Number(tpl.getAttribute('duration'));
  // a template with @duration: as many segments as the Period holds, from its presentationTimeOffset
  if (!timeline && every > 0) {
    t = Number(tpl.getAttribute('presentationTimeOffset') ?? 0);
    for (let k = 0; k < Math.ceil((periodSeconds * timescale) / every - 1e-6); k++, t += every, n++) segments.push({ url: new URL(fill(media, id, n, t), base).href, t, d: every });
  }
  for (const s of timeline ? childrenNamed(timeline, 'S') : []) {
    if (s.getAttribute('t') !== null && s.getAttribute('t') !== '') t = Number(s.getAttribute('t'));
    const d = Number(s.getAttribute('d'));
    for (let k = 0; k <= Number(s.getAttribute('r') ?? 0); k++) {
      segments.push({ url: new URL(fill(media, id, n, t), base).href, t, d });
      t += d;
      n += 1;
    }
  }
  const init = tpl.getAttribute('initialization');
  return {
    id, bandwidth: Number(rep.getAttribute('bandwidth')), timescale,
    presentationTimeOffset: Number(tpl.getAttribute('presentationTimeOffset') ?? 0), startNumber, segments,
    ...(rep.getAttribute('codecs') ? { codecs: rep.getAttribute('codecs')! } : {}),
    ...(rep.getAttribute('width') ? { width: Number(rep.getAttribute('width')) } : {}),
    ...(rep.getAttribute('height') ? { height: Number(rep.getAttribute('height')) } : {}),
    ...(init ? { init: new URL(fill(init, id, 0, 0), base).href } : {}),
  };
}

/** Reads an MPD served at `url` (segment URLs made absolute against the Period's BaseURL or the MPD's URL). */
export function readTestMpd(text: string, url: string): TestMpd {
  const mpd = new DOMParser().parseFromString(text, 'text/xml').documentElement!;
  const periods = childrenNamed(mpd, 'Period').map((p): TestPeriod => {
    const baseText = childrenNamed(p, 'BaseURL')[0]?.textContent?.trim();
    const base = baseText ? new URL(baseText, url).href : url;
    return {
      id: p.getAttribute('id') ?? '', start: parseIsoDuration(p.getAttribute('start')) ?? 0, duration: parseIsoDuration(p.getAttribute('duration')) ?? 0,
      ...(baseText ? { baseUrl: base } : {}),
      sets: childrenNamed(p, 'AdaptationSet').map((s) => ({
        id: s.getAttribute('id') ?? '', contentType: s.getAttribute('contentType') ?? '',
        ...(s.getAttribute('lang') ? { lang: s.getAttribute('lang')! } : {}),
        ...(s.getAttribute('mimeType') ? { mimeType: s.getAttribute('mimeType')! } : {}),
        representations: childrenNamed(s, 'Representation').map((r) => representationOf(r, base, parseIsoDuration(p.getAttribute('duration')) ?? 0)),
      })),
    };
  });
  return { type: mpd.getAttribute('type') ?? '', duration: parseIsoDuration(mpd.getAttribute('mediaPresentationDuration')) ?? 0, periods };
}

/** Downloads a Representation's init and media segments (following redirects) into one file and decodes it. */
export async function decodeRepresentation(rep: TestRepresentation, dir: string, name: string): Promise<{ errors: string; frames: number; seconds: number }> {
  const get = async (u: string): Promise<Buffer> => {
    const res = await fetch(u);
    if (res.status !== 200) throw new Error(`GET ${u} answered ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const parts = [await get(rep.init!)];
  for (const s of rep.segments) parts.push(await get(s.url));
  const file = path.join(dir, `${name}.mp4`);
  await writeFile(file, Buffer.concat(parts));
  return ffmpegDecode(file);
}

/**
 * Decodes every Representation of the Periods (text aside) with ffmpeg: what is wrong with each, none when all decode
 * whole (no error, the Period's length within 0.1 s, its video `fps` frames a second).
 */
export async function undecodedPeriods(periods: readonly TestPeriod[], fps: number): Promise<string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dash-periods-'));
  const wrong: string[] = [];
  try {
    for (const p of periods) for (const set of p.sets.filter((s) => s.contentType !== 'text')) for (const rep of set.representations) {
      const decoded = await decodeRepresentation(rep, dir, `${p.id}-${rep.id}`);
      const whole = decoded.errors === '' && Math.abs(decoded.seconds - p.duration) < 0.1
        && (set.contentType !== 'video' || decoded.frames === Math.round(p.duration * fps));
      if (!whole) wrong.push(`${p.id} ${set.contentType} ${rep.id}: ${JSON.stringify(decoded)}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return wrong;
}
