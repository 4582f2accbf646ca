// The playback URL of the proxy, read (DESIGN.md "Ad playback", issue 20, issue 26): the origin URL a path names,
// the query split between the ad server, the session and the origin, LL-HLS delivery directives, and paths refused.
import { ssaiError, type SsaiError } from '../errors.js';

/** `.m4s`, `.ts`, `.mp4` … of an ad segment URI, or '' when it has none. */
export function segmentExtension(uri: string): string {
  const pathname = uri.split(/[?#]/, 1)[0] ?? '';
  const match = /\.[A-Za-z0-9]{1,5}$/.exec(pathname.slice(pathname.lastIndexOf('/') + 1));
  return match ? match[0] : '';
}

/** Joins the configuration's sourceUrl and the rest of the playback path (DESIGN.md "Ad playback"). */
export function originUrlOf(sourceUrl: string, rest: string, query: string): string {
  const base = sourceUrl.endsWith('/') ? sourceUrl : `${sourceUrl}/`;
  return base + rest.replace(/^\/+/, '') + (query ? (base.includes('?') ? '&' : '?') + query : '');
}

/** A query name or value decoded; one with a malformed escape (`%zz`) is kept as written, as URLSearchParams does, not thrown. */
function decodeQueryPart(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Splits the query: `ads.<name>` go to the ad server, sessionId is ours, the rest goes to the origin untouched. */
export function splitQuery(raw: string): { playerParams: Record<string, string>; sessionId?: string; rest: string } {
  const playerParams: Record<string, string> = {};
  const rest: string[] = [];
  let sessionId: string | undefined;
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = decodeQueryPart(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decodeQueryPart(part.slice(eq + 1).replace(/\+/g, ' '));
    if (name.startsWith('ads.')) playerParams[name.slice(4)] = value;
    else if (name === 'sessionId') sessionId = value;
    else rest.push(part); // kept verbatim: signed origin tokens must not be re-encoded (STYLE.md rule 13)
  }
  return { playerParams, ...(sessionId ? { sessionId } : {}), rest: rest.join('&') };
}

/**
 * The LL-HLS delivery directives of a media playlist request (RFC 8216bis §6.2.5.1): `_HLS_msn` and `_HLS_part`
 * (which needs `_HLS_msn`); `_HLS_skip` and anything else is dropped. Undefined when there is no `_HLS_msn`.
 */
export function deliveryDirectives(query: string): { msn: number; part?: number } | SsaiError | undefined {
  if (!query.includes('_HLS_')) return undefined;
  let msn: string | undefined;
  let part: string | undefined;
  for (const pair of query.split('&')) {
    if (pair.startsWith('_HLS_msn=')) msn = pair.slice(9);
    else if (pair.startsWith('_HLS_part=')) part = pair.slice(10);
  }
  const integer = /^\d{1,15}$/;
  if (msn === undefined) return part === undefined ? undefined : ssaiError('BAD_DELIVERY_DIRECTIVE', '_HLS_part needs _HLS_msn');
  if (!integer.test(msn)) return ssaiError('BAD_DELIVERY_DIRECTIVE', '_HLS_msn must be a decimal integer');
  if (part !== undefined && !integer.test(part)) return ssaiError('BAD_DELIVERY_DIRECTIVE', '_HLS_part must be a decimal integer');
  return part === undefined ? { msn: Number(msn) } : { msn: Number(msn), part: Number(part) };
}

/**
 * The rest of a playback path is appended to the origin's URL: a dot segment, an encoded slash or a control character
 * would address another file of the origin (or fail there as a 502), so it is refused as 400 here (issue 20).
 */
export function playbackPathIsClean(segments: readonly string[]): boolean {
  for (const segment of segments) {
    if (segment === '.' || segment === '..') return false;
    if (!segment.includes('%')) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return false;
    }
    if (decoded === '.' || decoded === '..' || /[/\\\u0000-\u001f\u007f]/.test(decoded)) return false;
  }
  return true;
}
