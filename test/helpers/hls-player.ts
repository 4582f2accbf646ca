// Plays HLS in hls.js inside Debian's Chromium (playwright-core), for the end-to-end tests.
import { createReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';
/** Headless and quiet: without the background-networking flags Chromium calls out and is refused on a closed network. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'];
export const hasChromium = (): Promise<boolean> => access(CHROMIUM).then(() => true, () => false);

const TYPES: Record<string, string> = {
  '.m3u8': 'application/vnd.apple.mpegurl', '.m4s': 'video/iso.segment', '.mp4': 'video/mp4', '.js': 'text/javascript',
  '.vtt': 'text/vtt', '.html': 'text/html', '.mpd': 'application/dash+xml',
};

// An absolute src (the engine's PUBLIC_URL/media, cross-origin) plays as given; a relative one from the served root.
const PAGE = `<!doctype html><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
window.result = { levels: 0, errors: [], fatal: null, playedTo: 0 };
const hls = new Hls();
hls.on(Hls.Events.MANIFEST_PARSED, (_e, d) => { window.result.levels = d.levels.length; v.play(); });
hls.on(Hls.Events.ERROR, (_e, d) => { window.result.errors.push(d.details); if (d.fatal) window.result.fatal = d.details; });
v.addEventListener('timeupdate', () => { window.result.playedTo = v.currentTime; });
const src = new URLSearchParams(location.search).get('src');
hls.loadSource(/^https?:/.test(src) ? src : '/media/' + src);
hls.attachMedia(v);
</script>`;

/** Serves hls.js, a player page and (when given) `root` under /media/; returns its base URL and a close(). */
export async function servePlayer(root?: string): Promise<{ base: string; close: () => Promise<void> }> {
  const hlsJs = path.resolve('node_modules/hls.js/dist/hls.min.js');
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/') return void res.writeHead(200, { 'content-type': TYPES['.html']! }).end(PAGE);
    if (url.pathname !== '/hls.js' && root === undefined) return void res.writeHead(404).end();
    const file = url.pathname === '/hls.js' ? hlsJs : path.join(root ?? '', decodeURIComponent(url.pathname.replace(/^\/media\//, '')));
    if (file !== hlsJs && !file.startsWith(root ?? '')) return void res.writeHead(403).end();
    try {
      const s = await stat(file);
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'content-length': s.size });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export interface PlaybackResult {
  levels: number;
  errors: string[];
  fatal: string | null;
  playedTo: number;
}

/** Opens the player on `src` (absolute, or relative to the served root) and waits until it played `untilSec` or failed. */
export async function playHls(base: string, src: string, untilSec: number, timeoutMs = 30_000): Promise<PlaybackResult> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/?src=${encodeURIComponent(src)}`);
    await page.waitForFunction((t) => {
      const r = (window as unknown as { result: PlaybackResult }).result;
      return r.fatal !== null || r.playedTo >= t;
    }, untilSec, { timeout: timeoutMs }).catch(() => undefined);
    return await page.evaluate(() => (window as unknown as { result: PlaybackResult }).result);
  } finally {
    await browser.close();
  }
}

/** The player libraries a test page loads, by the path it loads them from. */
const PLAYER_SCRIPTS: Record<string, string> = {
  '/hls.js': 'node_modules/hls.js/dist/hls.min.js',
  '/dash.js': 'node_modules/dashjs/dist/modern/umd/dash.all.min.js',
  '/shaka.js': 'node_modules/shaka-player/dist/shaka-player.compiled.js',
};

/**
 * Serves a test's own player page (`page(pathname)`, any path but the libraries') and the player libraries at
 * /hls.js, /dash.js and /shaka.js; returns its base URL and a close().
 */
export async function servePage(page: (pathname: string) => string): Promise<{ base: string; close: () => Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const script = PLAYER_SCRIPTS[pathname];
    if (!script) return void res.writeHead(200, { 'content-type': TYPES['.html']! }).end(page(pathname));
    res.writeHead(200, { 'content-type': TYPES['.js']! });
    createReadStream(path.resolve(script)).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, close: () => new Promise<void>((r) => server.close(() => r())) };
}
