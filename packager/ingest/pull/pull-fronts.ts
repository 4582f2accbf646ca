// Builds the pull fronts from a blueprint input: `sources[0].url`, optional `username` and `password`
// (`passwordParam` holds the password itself: this engine has no parameter store).
import path from 'node:path';
import { PullFront } from './pull-front.js';

export interface PullInputSettings {
  name: string;
  sources?: Array<{ url?: string; username?: string; password?: string; passwordParam?: string }>;
}

export class IngestConfigError extends Error {
  override name = 'IngestConfigError';
}

// Network reads give up after 10 s without data, so a lost source ends ffmpeg (input loss) instead of hanging it.
const NETWORK_TIMEOUT = ['-rw_timeout', '10000000'];

function source(input: PullInputSettings): { url: string; username?: string; password?: string } {
  const first = input.sources?.[0];
  const url = first?.url?.trim();
  if (!url) throw new IngestConfigError(`input ${input.name} has no sources[0].url`);
  const password = first?.password || first?.passwordParam || undefined;
  return { url, ...(first?.username ? { username: first.username } : {}), ...(password ? { password } : {}) };
}

function withCredentials(url: URL, username?: string, password?: string): string {
  if (username) url.username = encodeURIComponent(username);
  if (password) url.password = encodeURIComponent(password);
  return url.toString();
}

function publicForm(url: URL): string {
  const copy = new URL(url.toString());
  copy.username = '';
  copy.password = '';
  return copy.toString();
}

/** URL_PULL: an HLS playlist or a plain HTTP(S) stream. */
export function urlPullFront(input: PullInputSettings): PullFront {
  const { url, username, password } = source(input);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new IngestConfigError(`input ${input.name}: ${url} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new IngestConfigError(`input ${input.name}: URL_PULL takes an http(s) URL, not ${parsed.protocol}`);
  // HLS sources pace themselves; a plain file over HTTP is read at its own rate (-re) like a live signal. A live HLS
  // source is joined at its live edge (its last segment), not ffmpeg's default of 3 segments back: those would be read
  // as a burst, putting the channel that much further behind its source for good (and its archive that much longer
  // than the time it ran). A playlist that has ended (VOD) is still read from its start.
  const hls = /\.m3u8($|\?)/i.test(parsed.pathname + parsed.search);
  const pacing = hls ? ['-live_start_index', '-1'] : ['-re'];
  return new PullFront('URL_PULL', [...pacing, ...NETWORK_TIMEOUT, '-i', withCredentials(parsed, username, password)], publicForm(parsed));
}

/** RTMP_PULL: plays an rtmp(s):// stream. */
export function rtmpPullFront(input: PullInputSettings): PullFront {
  const { url, username, password } = source(input);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new IngestConfigError(`input ${input.name}: ${url} is not a URL`);
  }
  if (parsed.protocol !== 'rtmp:' && parsed.protocol !== 'rtmps:') throw new IngestConfigError(`input ${input.name}: RTMP_PULL takes an rtmp:// URL, not ${parsed.protocol}`);
  return new PullFront('RTMP_PULL', [...NETWORK_TIMEOUT, '-i', withCredentials(parsed, username, password)], publicForm(parsed));
}

/**
 * MP4: a stored file looped as a live signal. `sources[0].url` is a path under DATA_DIR (the media store, an upload),
 * an absolute path inside DATA_DIR, or an http(s) URL.
 */
export function mp4Front(input: PullInputSettings, dataDir: string): PullFront {
  const { url, username, password } = source(input);
  if (/^https?:\/\//i.test(url)) {
    const parsed = new URL(url);
    return new PullFront('MP4', ['-re', '-stream_loop', '-1', ...NETWORK_TIMEOUT, '-i', withCredentials(parsed, username, password)], publicForm(parsed));
  }
  const root = path.resolve(dataDir);
  const file = path.resolve(root, url);
  // a blueprint must not read the engine's own secrets (keys, database) or leave DATA_DIR
  if (!file.startsWith(`${root}${path.sep}`) || /\.(sqlite|db|key)$/i.test(file)) throw new IngestConfigError(`input ${input.name}: ${url} is outside the data directory`);
  return new PullFront('MP4', ['-re', '-stream_loop', '-1', '-i', file], `file:${path.relative(root, file)}`);
}
