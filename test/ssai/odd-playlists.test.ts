// Issue 19 point 3: no 5xx on odd playlists. A generated corpus of mutations (dropped, duplicated, swapped, garbled and
// truncated lines, bad and huge numbers, unicode, malformed cue tags carrying the real SCTE-35 samples of the shared
// vectors) of the origin's playlists in every cue form goes through the proxy: nothing but 502/504 (a broken origin)
// may answer 5xx, and the process keeps serving.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS, type CueForm } from '../../fixtures/origin-server.js';
import { ladderOf } from '../../ssai/decide/creative-cache.js';
import { prepareCreative } from '../../vod-encoder/prepare-creative.js';
import { startSsai, variantUrls, type SsaiHarness } from './setup.js';
import { VECTORS_DIR, vectorPath } from '../helpers/vectors.js';
import type { TestEngine } from '../helpers/engine.js';

const FORMS: CueForm[] = ['cue-out', 'cue-out-cont-slash', 'daterange', 'oatcls', 'splicepoint', 'scte35', 'cue-out-zero'];

/** The real SCTE-35 samples of the vectors (and a fixed one where the vectors are absent). */
const SCTE35: string[] = VECTORS_DIR
  ? (JSON.parse(readFileSync(vectorPath('scte35-samples.json'), 'utf8')) as { samples: Array<{ base64: string }> }).samples.map((s) => s.base64)
  : ['/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo='];

const hex = (b64: string) => `0x${Buffer.from(b64, 'base64').toString('hex').toUpperCase()}`;
const BAD_NUMBERS = ['-1', '-10', '0', '-0', 'NaN', 'abc', '1e308', '-1e308', 'Infinity', '99999999999999999999999', '1.5.5', '', '0x1F', '٣'];
const UNICODE = ['\u202e', '💥', '\u0000', 'é', '\ufeff', '\u2028', '"', ',', '=', '\\', '\r'];

/** Cue tags as odd encoders write them: bad numbers, missing ids, unparseable dates, the vector payloads cut or whole. */
function oddCues(n: number, scte: string): string[] {
  const cut = scte.slice(0, Math.max(1, scte.length - 7 - (n % 11)));
  return [
    `#EXT-X-CUE-OUT:${BAD_NUMBERS[n % BAD_NUMBERS.length]}`,
    `#EXT-X-CUE-OUT:DURATION=${BAD_NUMBERS[n % BAD_NUMBERS.length]}`,
    `#EXT-X-CUE-OUT-CONT:ElapsedTime=${BAD_NUMBERS[n % BAD_NUMBERS.length]},Duration=${BAD_NUMBERS[(n + 3) % BAD_NUMBERS.length]},SCTE35=${cut}`,
    `#EXT-X-CUE-OUT-CONT:${BAD_NUMBERS[n % BAD_NUMBERS.length]}/${BAD_NUMBERS[(n + 5) % BAD_NUMBERS.length]}`,
    '#EXT-X-DATERANGE:START-DATE="not a date",PLANNED-DURATION=30,SCTE35-OUT=0xFC',
    `#EXT-X-DATERANGE:ID="x${n}",START-DATE="2026-13-45T99:99:99Z",DURATION=${BAD_NUMBERS[n % BAD_NUMBERS.length]},SCTE35-OUT=${hex(scte)}`,
    `#EXT-X-DATERANGE:ID="",START-DATE="1970-01-01T00:00:00Z",PLANNED-DURATION=1e308,SCTE35-CMD=${hex(cut)}`,
    `#EXT-X-DATERANGE:ID="far",START-DATE="9999-12-31T23:59:59Z",PLANNED-DURATION=-5,SCTE35-OUT=${hex(scte)}`,
    `#EXT-OATCLS-SCTE35:${n % 2 ? scte : cut}`,
    `#EXT-X-SPLICEPOINT-SCTE35:${cut}`,
    `#EXT-X-SCTE35:CUE="${n % 2 ? scte : cut}",CUE-OUT=YES,DURATION=${BAD_NUMBERS[n % BAD_NUMBERS.length]}`,
    `#EXT-X-SCTE35:CUE="${scte}",CUE-OUT=CONT,ELAPSED=${BAD_NUMBERS[(n + 1) % BAD_NUMBERS.length]}`,
    '#EXT-X-CUE-IN', '#EXT-X-CUE-IN:garbage',
  ];
}

type Op = { kind: 'drop' | 'duplicate' | 'swap' | 'garble' | 'number' | 'huge' | 'unicode' | 'truncate' | 'cue'; line: number; at: number; pick: number };

function mutate(text: string, ops: Op[]): string {
  let lines = text.split('\n');
  for (const op of ops) {
    if (!lines.length) break;
    const i = op.line % lines.length;
    const line = lines[i]!;
    const at = line.length ? op.at % line.length : 0;
    switch (op.kind) {
      case 'drop': lines.splice(i, 1); break;
      case 'duplicate': lines.splice(i, 0, line); break;
      case 'swap': if (i + 1 < lines.length) [lines[i], lines[i + 1]] = [lines[i + 1]!, line]; break;
      case 'garble': lines[i] = line.slice(0, at) + '#:,="'.charAt(op.pick % 5).repeat(1 + (op.pick % 3)) + line.slice(at + 1 + (op.pick % 4)); break;
      case 'number': lines[i] = line.replace(/-?\d+(\.\d+)?/, BAD_NUMBERS[op.pick % BAD_NUMBERS.length]!); break;
      case 'huge': lines[i] = op.pick % 2 ? line.replace(/\d+(\.\d+)?/g, '9'.repeat(40)) : line + 'x'.repeat(50_000); break;
      case 'unicode': lines[i] = line.slice(0, at) + UNICODE[op.pick % UNICODE.length] + line.slice(at); break;
      case 'truncate': lines[i] = line.slice(0, at); lines = lines.slice(0, i + 1 + (op.pick % 3)); break;
      case 'cue': {
        const cues = oddCues(op.pick, SCTE35[op.pick % SCTE35.length]!);
        lines.splice(i, 0, cues[op.pick % cues.length]!);
        break;
      }
    }
  }
  return lines.join('\n');
}

const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom<Op['kind']>('drop', 'duplicate', 'swap', 'garble', 'number', 'huge', 'unicode', 'truncate', 'cue', 'cue'),
  line: fc.nat(200), at: fc.nat(400), pick: fc.nat(1000),
});

describe('odd origin playlists through the proxy', () => {
  let h: SsaiHarness;
  let engine: TestEngine | undefined;
  const statuses = new Map<number, number>();

  beforeAll(async () => {
    // Every creative is prepared for one fixed ladder (a mutated master would otherwise ask for a new transcode per
    // mutation): stitching still runs for real, on the real prepared media.
    const ladder = ladderOf([{ width: 640, height: 360, bandwidth: 730_000, frameRate: 30 }, { width: 320, height: 180, bandwidth: 350_000, frameRate: 30 }], 2);
    h = await startSsai({
      creativeWaitMs: 60_000,
      prepare: (url, _ladder, creativeId) => prepareCreative(url, ladder, { cacheDir: path.join(engine!.dataDir, 'media', 'creatives'), creativeId }),
    });
    engine = h.engine;
  }, 60_000);
  afterAll(async () => h?.close());

  it('plays the content of a playlist with a negative CUE-OUT duration or a DATERANGE without ID and date, counting the cues', async () => {
    const live = await h.configure('/vast4?sid=[session.id]');
    const count = async (reason: string) => Number(new RegExp(`ssai_cue_errors_total\\{reason="${reason}"\\} (\\d+)`).exec(await (await fetch(`${h.engine.url}/metrics`)).text())?.[1] ?? 0);
    const before = { duration: await count('bad_duration'), id: await count('missing_id') };
    h.origin.cueForm = 'none';
    h.origin.position = 40;
    h.origin.rewrite = (pathname, body) => pathname.endsWith('v0.m3u8')
      ? body.replace('#EXTINF', '#EXT-X-CUE-OUT:-30\n#EXT-X-DATERANGE:START-DATE="yesterday",PLANNED-DURATION=30,SCTE35-OUT=0xFC000\n#EXTINF') : body;
    try {
      const master = await h.get(`/v1/master/${live}/live/master.m3u8`);
      const media = await h.get(variantUrls(master.text).find((u) => u.endsWith('/3.m3u8'))!);
      expect(media.status, media.text).toBe(200);
      expect(media.text).toContain('/media/v0/seg_');
      expect(media.text).not.toContain('/v1/segment/');
      expect(await count('bad_duration')).toBe(before.duration + 1);
      expect(await count('missing_id')).toBe(before.id + 1);
    } finally {
      h.origin.rewrite = undefined;
    }
  });

  it('answers no 5xx but 502/504 to 600 mutations of the origin playlists, and keeps serving', async () => {
    const live = await h.configure('/vast4?sid=[session.id]');
    const vod = await h.configure('/vast4?sid=[session.id]', { type: 'broker' });
    const vmap = await h.configure('/vmap', { type: 'broker' });
    const scenario = fc.record({
      form: fc.constantFrom(...FORMS), vod: fc.boolean(), vmap: fc.boolean(), target: fc.constantFrom('media', 'media', 'media', 'master', 'both'),
      at: fc.integer({ min: 1, max: 3 * CLIP_SEGMENTS }), ops: fc.array(opArb, { minLength: 1, maxLength: 4 }),
    });
    await fc.assert(fc.asyncProperty(scenario, async (s) => {
      h.origin.cueForm = s.form;
      h.origin.position = (s.at + BREAK_START) * SEGMENT_SECONDS;
      h.origin.rewrite = (pathname, body) => {
        const master = pathname.endsWith('/master.m3u8');
        return (master ? s.target !== 'media' : s.target !== 'master') ? mutate(body, s.ops) : body;
      };
      const guid = s.vod ? (s.vmap ? vmap : vod) : live;
      const urls: string[] = [];
      const see = async (url: string): Promise<string> => {
        const res = await h.get(url);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        urls.push(`${url} → ${res.status} ${res.status >= 500 ? res.text : ''}`);
        expect(res.status >= 500 && res.status !== 502 && res.status !== 504, urls.join('\n')).toBe(false);
        return res.text;
      };
      const master = await see(`/v1/master/${guid}/${s.vod ? 'vod' : 'live'}/master.m3u8`);
      for (const u of variantUrls(master).filter((x) => x.startsWith('/v1/manifest/')).slice(0, 3)) await see(u);
      const sid = /\/v1\/manifest\/[^/]+\/([^/]+)\//.exec(master)?.[1];
      if (sid) await see(`/v1/tracking/${guid}/${sid}`);
    }), { numRuns: 600, seed: 19, endOnFailure: true });
    h.origin.rewrite = undefined;
    h.origin.cueForm = 'cue-out';
    // still serving, and the malformed cues were counted
    expect((await h.get(`/v1/master/${live}/live/master.m3u8`)).status).toBe(200);
    const metrics = await (await fetch(`${h.engine.url}/metrics`)).text();
    expect(metrics).toMatch(/ssai_cue_errors_total\{reason="[a-z_]+"\} [1-9]/);
    process.stderr.write(`odd playlists: statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`);
  }, 600_000);
});
