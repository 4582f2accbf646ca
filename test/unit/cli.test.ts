import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ROLES } from '../../kernel/core/config.js';

const run = promisify(execFile);
const engineBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/engine.js');

async function engine(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [engineBin, ...args], { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

const GOOD = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:4.0,\na.ts\n#EXTINF:4.0,\nb.ts\n#EXT-X-ENDLIST\n';
const BAD = '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:6.0,\na.ts\n#EXT-X-ENDLIST\n';
// two Periods of 4 s, the second without audio (a warning); GAP_MPD starts it 1 s late (an error)
const set = (type: string) => `<AdaptationSet contentType="${type}"><Representation id="${type}" bandwidth="1"><SegmentTemplate timescale="1" duration="2" media="${type}$Number$.m4s"/></Representation></AdaptationSet>`;
const WARN_MPD = `<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S"><Period id="a" start="PT0S" duration="PT4S">${set('video')}${set('audio')}</Period><Period id="b" start="PT4S" duration="PT4S">${set('video')}</Period></MPD>`;
const GAP_MPD = WARN_MPD.replace('start="PT4S"', 'start="PT5S"').replace('PT8S', 'PT9S');

describe('the engine command', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/vnd.apple.mpegurl');
      res.end(req.url === '/good.m3u8' ? GOOD : req.url === '/warn.mpd' ? WARN_MPD : req.url === '/gap.mpd' ? GAP_MPD : BAD);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('lists every configuration variable and role in --help', async () => {
    const { code, stdout } = await engine(['--help']);
    expect(code).toBe(0);
    for (const [name] of CONFIG_VARIABLES) expect(stdout).toContain(name);
    for (const role of ROLES) expect(stdout).toContain(role);
  });

  it('passes a conforming playlist and flags a segment longer than the target duration', async () => {
    const good = await engine(['check-playlist', `${base}/good.m3u8`]);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('ok');
    const bad = await engine(['check-playlist', `${base}/bad.m3u8`]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('SEGMENT_OVER_TARGET');
  });

  it('checks an MPD: exits 1 on an error, prints a warning and exits 0 when only warnings are found', async () => {
    const warn = await engine(['check-playlist', `${base}/warn.mpd`]);
    expect(warn.stdout).toContain('warning MPD_TRACK_MISSING');
    expect(warn.stdout).toContain('0 error(s), 1 warning(s)');
    expect(warn.code).toBe(0);
    const gap = await engine(['check-playlist', `${base}/gap.mpd`]);
    expect(gap.stdout).toContain('MPD_PERIOD_GAP');
    expect(gap.code).toBe(1);
  });

  it('names the bad variable and exits 2 on a configuration error', async () => {
    const { code, stderr } = await run(process.execPath, [engineBin, 'start'], { env: { ...process.env, PORT: 'x' } }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(code).toBe(2);
    expect(stderr).toContain('PORT');
  });
});
