// Issue 31 point 7 through the real proxy: the <Error> URLs of an ad server's answer fire once per decision with the
// VAST 4 error code in [ERRORCODE], those of every level of a wrapper chain, from the inline fast path and from the
// full VAST client, in stitched and guided mode. A mock ad server serves the documents and counts each error URL's
// hits by code.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import type { PrepareFn } from '../../ssai/decide/creative-cache.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** An ad server whose documents name error URLs at /err/<name>?code=[ERRORCODE]; hits counted by `<name>:<code>`. */
class ErrorAdServer {
  readonly hits = new Map<string, number>();
  private readonly server = http.createServer((req, res) => this.serve(req, res));
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** Hits of one error URL, by code: `{ 303: 1 }`. */
  codesOf(name: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, n] of this.hits) if (k.startsWith(`${name}:`)) out[k.slice(name.length + 1)] = n;
    return out;
  }

  private err(name: string): string {
    return `<Error><![CDATA[${this.url}/err/${name}?code=[ERRORCODE]]]></Error>`;
  }

  /** A wrapper (VAST-level and ad-level errors) around `target`. */
  private wrapper(name: string, target: string): string {
    return `<?xml version="1.0"?><VAST version="4.0">${this.err(`${name}-vast`)}<Ad id="${name}"><Wrapper><AdSystem>mock</AdSystem>
<VASTAdTagURI><![CDATA[${this.url}${target}]]></VASTAdTagURI>${this.err(name)}<Impression><![CDATA[${this.url}/imp]]></Impression></Wrapper></Ad></VAST>`;
  }

  private inline(name: string, media: string): string {
    return `<?xml version="1.0"?><VAST version="4.0"><Ad id="${name}"><InLine><AdSystem>mock</AdSystem><AdTitle>t</AdTitle>${this.err(name)}
<Impression><![CDATA[${this.url}/imp]]></Impression><Creatives><Creative id="cr-${name}"><Linear><Duration>00:00:06</Duration>
<MediaFiles><MediaFile delivery="progressive" type="video/mp4" width="640" height="360"><![CDATA[${this.url}/media/${media}.mp4]]></MediaFile></MediaFiles>
</Linear></Creative></Creatives></InLine></Ad></VAST>`;
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const u = new URL(req.url ?? '/', 'http://x');
    const xml = (body: string) => { res.writeHead(200, { 'content-type': 'application/xml' }); res.end(body); };
    const [, kind = '', name = ''] = u.pathname.split('/');
    if (kind === 'err') {
      const key = `${name}:${u.searchParams.get('code')}`;
      this.hits.set(key, (this.hits.get(key) ?? 0) + 1);
      res.writeHead(204).end();
      return;
    }
    const depth = Number(u.searchParams.get('depth') ?? 0);
    switch (kind) {
      // a chain of `depth` wrappers named <tag>-<depth>, …, <tag>-1, then `to`
      case 'chain': {
        const tag = u.searchParams.get('tag') ?? 'c';
        const to = u.searchParams.get('to') ?? '/empty';
        return xml(this.wrapper(`${tag}-${depth}`, depth > 1 ? `/chain?tag=${tag}&depth=${depth - 1}&to=${encodeURIComponent(to)}` : to));
      }
      case 'empty': return xml(`<?xml version="1.0"?><VAST version="4.0">${this.err(`${name || 'empty'}`)}</VAST>`);
      case 'slow': return; // never answers: the decision's budget ends it
      case 'not-xml': return xml('<?xml version="1.0"?><VAST version="4.0"><Ad><InLine>');
      case 'not-vast': return xml('<?xml version="1.0"?><html><body>no ads</body></html>');
      // an ad neither InLine nor Wrapper (the wrong case): schema error at the root
      case 'bad-ad': return xml(`<?xml version="1.0"?><VAST version="4.0">${this.err('bad-ad')}<Ad id="x"><Inline><AdSystem>m</AdSystem></Inline></Ad></VAST>`);
      case 'inline': return xml(this.inline(name, u.searchParams.get('media') ?? 'broken'));
      default: res.writeHead(404).end();
    }
  }
}

/** Creatives whose media file is named "pending" never finish preparing (a timeout); any other fails at once. */
const prepare: PrepareFn = (url) => url.includes('/pending')
  ? new Promise(() => undefined)
  : Promise.resolve({ ok: false, error: { code: 'VOD_NOT_MEDIA', message: 'not media', reason: 'test' } });

describe('VAST error reporting', () => {
  let h: SsaiHarness;
  const ads = new ErrorAdServer();

  beforeAll(async () => {
    await ads.start();
    h = await startSsai({ prepare, creativeWaitMs: 300 });
    // the break covers the window's start: a playlist waits for its decision
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
  }, 120_000);
  afterAll(async () => { await h?.close(); await ads.close(); });

  /** A session of a configuration asking `adPath`, its break decided through every playlist (and asset list) it has. */
  async function decide(adPath: string, mode: 'stitched' | 'guided' = 'stitched'): Promise<void> {
    const created = await h.engine.api('POST', '/broker/adinserts', { headers: h.auth, body: { name: 'errors', type: 'live', ad_server: `${ads.url}${adPath}`, source_url: `${h.origin.url}/` } });
    expect(created.status).toBe(200);
    const master = await h.get(`/v1/master/${created.body.guid as string}/live/master.m3u8${mode === 'guided' ? '?ads.mode=guided' : ''}`);
    const pl = scanMultivariantPlaylist(master.text).playlist!;
    // every rendition, twice: the errors still fire once
    for (const url of [...pl.variants.map((v) => v.uri), ...pl.renditions.filter((r) => r.uri).map((r) => r.uri!)]) {
      for (let i = 0; i < 2; i++) {
        const media = await h.get(url);
        expect(media.status, media.text).toBe(200);
        if (mode !== 'guided') continue;
        const tags = scanMediaPlaylist(media.text).playlist!.segments.flatMap((s) => s.tags);
        const list = tags.map((t) => /X-ASSET-LIST="([^"]+)"/.exec(t.value)?.[1]).find(Boolean);
        if (list) expect((await h.get(new URL(list, `${h.engine.url}${url}`).href)).status).toBe(200);
      }
    }
    await h.engine.ctx.services.ssai!.beacons.idle();
  }

  it('reports 303 to every level when a wrapper leads to an empty VAST', async () => {
    await decide('/chain?tag=e&depth=1&to=/empty/e-inner');
    for (const name of ['e-1', 'e-1-vast', 'e-inner']) expect(ads.codesOf(name), name).toEqual({ 303: 1 });
  });

  it('reports 301 when a wrapper target does not answer within the budget', async () => {
    await decide('/chain?tag=t&depth=2&to=/slow');
    for (const name of ['t-2', 't-2-vast', 't-1', 't-1-vast']) expect(ads.codesOf(name), name).toEqual({ 301: 1 });
  }, 20_000);

  it('reports 302 to every wrapper when the chain is deeper than the limit', async () => {
    await decide('/chain?tag=d&depth=7&to=/inline/never');
    // five wrappers are followed, the fifth's target is one too many
    for (const n of [7, 6, 5, 4, 3]) expect(ads.codesOf(`d-${n}`), `d-${n}`).toEqual({ 302: 1 });
    expect(ads.codesOf('never')).toEqual({});
  });

  it('reports 100 when a wrapper target is not well-formed XML, 101 when it is not VAST or an ad is neither inline nor wrapper', async () => {
    await decide('/chain?tag=x&depth=1&to=/not-xml');
    expect(ads.codesOf('x-1')).toEqual({ 100: 1 });
    await decide('/chain?tag=s&depth=1&to=/not-vast');
    expect(ads.codesOf('s-1')).toEqual({ 101: 1 });
    await decide('/bad-ad');
    expect(ads.codesOf('bad-ad')).toEqual({ 101: 1 });
  });

  it('reports 403 for a creative the proxy cannot prepare, from the inline fast path and through a wrapper', async () => {
    await decide('/inline/fast?media=broken');
    expect(ads.codesOf('fast')).toEqual({ 403: 1 });
    await decide(`/chain?tag=w&depth=1&to=${encodeURIComponent('/inline/wrapped?media=broken')}`);
    for (const name of ['w-1', 'w-1-vast', 'wrapped']) expect(ads.codesOf(name), name).toEqual({ 403: 1 });
  });

  it('reports 402 for a creative not prepared in time', async () => {
    await decide('/inline/late?media=pending');
    expect(ads.codesOf('late')).toEqual({ 402: 1 });
  });

  it('reports in guided mode too, once per decision', async () => {
    await decide('/chain?tag=g&depth=1&to=/empty/g-inner', 'guided');
    for (const name of ['g-1', 'g-1-vast', 'g-inner']) expect(ads.codesOf(name), name).toEqual({ 303: 1 });
    await decide('/inline/guided-fast?media=broken', 'guided');
    expect(ads.codesOf('guided-fast')).toEqual({ 403: 1 });
  });
});
