// `engine check-playlist URL`: fetches a playlist (every media playlist of a multivariant one), reloads live ones
// `reloads` times at their target duration, and reports what RFC 8216 forbids (ssai/playlist-checker.ts).
import { request } from 'undici';
import { checkPlaylist } from './playlist-checker.js';
import { playlistKind, resolveUri, scanMediaPlaylist, scanMultivariantPlaylist } from './playlist-scanner.js';

export type CheckFinding = { rule: string; message: string };

async function fetchText(url: string): Promise<{ text: string } | { error: string }> {
  try {
    const res = await request(url, { signal: AbortSignal.timeout(5000) });
    const text = await res.body.text();
    if (res.statusCode >= 400) return { error: `HTTP ${res.statusCode}` };
    return { text };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

export async function checkPlaylistUrl(url: string, reloads: number, opts: { sleep?: (ms: number) => Promise<void> } = {}): Promise<Array<{ rule: string; message: string }>> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const first = await fetchText(url);
  if ('error' in first) return [{ rule: 'FETCH_FAILED', message: `${url}: ${first.error}` }];
  if (!playlistKind(first.text)) return [{ rule: 'NOT_HLS', message: `${url}: the body does not start with #EXTM3U` }];
  let media: Array<{ url: string; text: string }> = [{ url, text: first.text }];
  if (playlistKind(first.text) === 'multivariant') {
    const mv = scanMultivariantPlaylist(first.text).playlist;
    const uris = [...new Set([...(mv?.variants ?? []).map((v) => v.uri), ...(mv?.renditions ?? []).flatMap((r) => (r.uri ? [r.uri] : []))])];
    media = [];
    for (const u of uris) {
      const abs = resolveUri(url, u);
      const got = await fetchText(abs);
      if ('error' in got) return [{ rule: 'FETCH_FAILED', message: `${abs}: ${got.error}` }];
      media.push({ url: abs, text: got.text });
    }
  }
  const findings: CheckFinding[] = [];
  const add = (u: string, list: ReturnType<typeof checkPlaylist>) => {
    for (const f of list) findings.push({ rule: f.rule, message: `${u}${f.line ? `:${f.line}` : ''}: ${f.message}` });
  };
  for (const m of media) add(m.url, checkPlaylist(m.text));
  const live = media.filter((m) => !scanMediaPlaylist(m.text).playlist?.endList);
  for (let i = 0; i < reloads && live.length; i++) {
    const target = scanMediaPlaylist(live[0]!.text).playlist?.targetDuration || 2;
    await sleep(target * 1000);
    for (const m of live) {
      const got = await fetchText(m.url);
      if ('error' in got) { findings.push({ rule: 'FETCH_FAILED', message: `${m.url}: ${got.error}` }); continue; }
      add(m.url, checkPlaylist(got.text, m.text));
      m.text = got.text;
    }
  }
  return findings;
}
