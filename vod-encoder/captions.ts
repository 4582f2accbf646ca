// Offline captions: ffmpeg → 16 kHz mono WAV → pocketsphinx (Debian's 0.8 CLI, en-us model) → WebVTT, then the
// WebVTT is added to the HLS master as a SUBTITLES rendition and to the MPD as a text AdaptationSet.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import type { Logger } from 'pino';
import { CMAF_DIR, DASH_MANIFEST_NAME, HLS_MASTER_NAME } from './encode.js';
import { failure, stderrTail, type VodResult } from './errors.js';
import { execTool } from '../media/exec-tool.js';
import { ffmpegOnce } from './ffmpeg-runner.js';
import { vttTime } from './thumbnails.js';

export interface RecognizedWord {
  word: string;
  start: number;
  end: number;
}
export interface Cue {
  start: number;
  end: number;
  text: string;
}

export interface RecognizerOptions {
  /** Debian's pocketsphinx 0.8 ships `pocketsphinx_continuous`; 5.x's `pocketsphinx single` is not packaged there. */
  bin?: string;
  /** Directory holding `en-us/` (acoustic model), `en-us.lm.bin` and `cmudict-en-us.dict` (pocketsphinx-en-us). */
  modelDir?: string;
  logger?: Logger;
  /** Stops ffmpeg and the recognizer (the worker's job signal: the queue is closing). */
  signal?: AbortSignal;
}

const DEFAULT_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
// Fillers and markers the decoder emits between words; never caption text.
const NON_WORDS = /^(<s>|<\/s>|<sil>|\[.*\]|\+\+.*\+\+)$/;

/** Parses `-time yes` output lines `word start end confidence`; `word(2)` alternates lose their suffix. */
export function parseSphinxTimes(stdout: string): RecognizedWord[] {
  const words: RecognizedWord[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/.exec(line.trim());
    if (!m || NON_WORDS.test(m[1]!)) continue;
    words.push({ word: m[1]!.replace(/\(\d+\)$/, ''), start: Number(m[2]), end: Number(m[3]) });
  }
  return words;
}

/** Groups words into cues of at most `maxSec` seconds and `maxChars` characters; a long pause also ends a cue. */
export function wordsToCues(words: RecognizedWord[], maxSec = 5, maxChars = 42, pauseSec = 1.5): Cue[] {
  const cues: Cue[] = [];
  let cur: Cue | null = null;
  for (const w of words) {
    const fits = cur !== null && w.end - cur.start <= maxSec && cur.text.length + 1 + w.word.length <= maxChars
      && w.start - cur.end <= pauseSec;
    if (cur && fits) {
      cur.text += ` ${w.word}`;
      cur.end = w.end;
    } else {
      if (cur) cues.push(cur);
      cur = { start: w.start, end: w.end, text: w.word };
    }
  }
  if (cur) cues.push(cur);
  return cues;
}

export function cuesToVtt(cues: Cue[]): string {
  return ['WEBVTT', '', ...cues.flatMap((c) => [`${vttTime(c.start)} --> ${vttTime(c.end)}`, c.text, ''])].join('\n');
}

/** Speech recognition of a media file's first audio track. */
export async function recognizeSpeech(source: string, opts: RecognizerOptions = {}): Promise<VodResult<RecognizedWord[]>> {
  const tmp = path.join(os.tmpdir(), `vod-captions-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  await mkdir(tmp, { recursive: true });
  try {
    const wav = path.join(tmp, 'speech.wav');
    const ex = await ffmpegOnce(['-v', 'error', '-i', source, '-map', '0:a:0', '-ac', '1', '-ar', '16000',
      '-c:a', 'pcm_s16le', wav], 'VOD_CAPTIONS_FAILED', opts.signal);
    if (!ex.ok) return ex;
    const model = opts.modelDir ?? DEFAULT_MODEL_DIR;
    const started = Date.now();
    const out = await execTool(opts.bin ?? 'pocketsphinx_continuous', [
      '-infile', wav, '-time', 'yes', '-hmm', path.join(model, 'en-us'), '-lm', path.join(model, 'en-us.lm.bin'),
      '-dict', path.join(model, 'cmudict-en-us.dict'), '-logfn', path.join(tmp, 'sphinx.log'),
    ], 30 * 60_000, opts.signal);
    if (out.exitCode !== 0) {
      const log = await readFile(path.join(tmp, 'sphinx.log'), 'utf8').catch(() => '');
      return failure('VOD_CAPTIONS_FAILED', stderrTail(`${log}\n${out.stderr}`));
    }
    const words = parseSphinxTimes(out.stdout);
    opts.logger?.info({ source, words: words.length, ms: Date.now() - started }, 'speech recognized');
    return { ok: true, value: words };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Recognizes speech and returns the cues and the WebVTT text. */
export async function generateCaptions(source: string, opts: RecognizerOptions = {}): Promise<VodResult<{ cues: Cue[]; vtt: string }>> {
  const words = await recognizeSpeech(source, opts);
  if (!words.ok) return words;
  const cues = wordsToCues(words.value);
  return { ok: true, value: { cues, vtt: cuesToVtt(cues) } };
}

export interface SubtitleTrack {
  /** BCP 47 language, e.g. `en`. */
  language: string;
  /** Human-readable name in the player menu. */
  name: string;
}

/** Writes `subs_<lang>.m3u8` over one WebVTT file and adds it to the master as SUBTITLES="subs" (idempotent). */
export async function addHlsSubtitles(cmafDir: string, masterName: string, vttName: string, durationSec: number,
  track: SubtitleTrack): Promise<string> {
  const playlistName = `subs_${track.language}.m3u8`;
  const target = Math.ceil(durationSec);
  await writeFile(path.join(cmafDir, playlistName), ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${target}`,
    '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD', `#EXTINF:${durationSec.toFixed(3)},`, vttName, '#EXT-X-ENDLIST', ''].join('\n'));
  const masterFile = path.join(cmafDir, masterName);
  const lines = (await readFile(masterFile, 'utf8')).split('\n')
    .filter((l) => !(l.startsWith('#EXT-X-MEDIA:') && l.includes('TYPE=SUBTITLES') && l.includes(`URI="${playlistName}"`)));
  const media = `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="${track.name}",LANGUAGE="${track.language}",`
    + `DEFAULT=NO,AUTOSELECT=YES,FORCED=NO,URI="${playlistName}"`;
  const firstInf = lines.findIndex((l) => l.startsWith('#EXT-X-STREAM-INF'));
  lines.splice(firstInf < 0 ? lines.length : firstInf, 0, media);
  const updated = lines.map((l) => (l.startsWith('#EXT-X-STREAM-INF') && !l.includes('SUBTITLES=') ? `${l},SUBTITLES="subs"` : l));
  await writeFile(masterFile, updated.join('\n'));
  return playlistName;
}

/** Adds the WebVTT to the MPD's Period as a text AdaptationSet (idempotent per language). */
export async function addDashSubtitles(mpdFile: string, vttName: string, track: SubtitleTrack): Promise<void> {
  const doc = new DOMParser().parseFromString(await readFile(mpdFile, 'utf8'), 'text/xml');
  const period = doc.getElementsByTagName('Period')[0];
  if (!period) throw new Error(`no Period in ${mpdFile}`);
  const sets = Array.from(period.getElementsByTagName('AdaptationSet'));
  for (const s of sets) if (s.getAttribute('contentType') === 'text' && s.getAttribute('lang') === track.language) period.removeChild(s);
  const ns = period.namespaceURI;
  const ids = Array.from(period.getElementsByTagName('AdaptationSet')).map((s) => Number(s.getAttribute('id') ?? 0));
  const set = doc.createElementNS(ns, 'AdaptationSet');
  set.setAttribute('id', String(Math.max(-1, ...ids) + 1));
  set.setAttribute('contentType', 'text');
  set.setAttribute('mimeType', 'text/vtt');
  set.setAttribute('lang', track.language);
  const role = doc.createElementNS(ns, 'Role');
  role.setAttribute('schemeIdUri', 'urn:mpeg:dash:role:2011');
  role.setAttribute('value', 'subtitle');
  const rep = doc.createElementNS(ns, 'Representation');
  rep.setAttribute('id', `subs_${track.language}`);
  rep.setAttribute('bandwidth', '256');
  const baseUrl = doc.createElementNS(ns, 'BaseURL');
  baseUrl.appendChild(doc.createTextNode(vttName));
  rep.appendChild(baseUrl);
  set.appendChild(role);
  set.appendChild(rep);
  period.appendChild(set);
  await writeFile(mpdFile, new XMLSerializer().serializeToString(doc));
}

/** Writes `subs_<lang>.vtt` next to the manifests of an encode and references it from both (idempotent). */
export async function attachCaptions(outDir: string, vtt: string, durationSec: number,
  track: SubtitleTrack = { language: 'en', name: 'English' }): Promise<{ vttPath: string; playlistPath: string }> {
  const cmafDir = path.join(outDir, CMAF_DIR);
  const vttName = `subs_${track.language}.vtt`;
  await writeFile(path.join(cmafDir, vttName), vtt);
  const playlistName = await addHlsSubtitles(cmafDir, HLS_MASTER_NAME, vttName, durationSec, track);
  await addDashSubtitles(path.join(cmafDir, DASH_MANIFEST_NAME), vttName, track);
  return { vttPath: `${CMAF_DIR}/${vttName}`, playlistPath: `${CMAF_DIR}/${playlistName}` };
}
