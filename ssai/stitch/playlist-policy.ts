// What a configuration's ad-operations fields change in the playlists it serves (issue 31 item 5,
// docs/ssai-ad-ops.md): the origin's cue tags kept or removed (ad_marker_passthrough), and content and ad segments
// addressed through CDN prefixes (content_segment_prefix, ad_segment_prefix). Pure: string operations only, as
// resolveUri (WHATWG URL would re-encode signed tokens, STYLE.md rule 13).
import type { AdPolicies } from '../../kernel/seams/adinserts.js';

export type PlaylistPolicy = {
  /** ad_marker_passthrough false: the origin's cue tags (cue-finder's isCueTag) are left out */
  removeCues: boolean;
  /** a content segment, init segment, part or preload hint (absolute URI) as listed */
  contentUri?: (absoluteUri: string) => string;
  /** an ad or slate segment or init segment (root-relative engine route or absolute) as listed */
  adUri?: (uri: string) => string;
  /** names the policy in the memo keys of shared playlists: configurations that differ never share a text */
  key: string;
};

/** The policy of a configuration; `publicUrl` is the engine's public URL, which ad URIs are addressed under. */
export function playlistPolicy(config: AdPolicies & { sourceUrl: string }, publicUrl: string): PlaylistPolicy {
  const removeCues = config.adMarkerPassthrough === false;
  const content = config.contentSegmentPrefix;
  const ad = config.adSegmentPrefix;
  const policy: PlaylistPolicy = { removeCues, key: `${removeCues ? 'nocues' : 'cues'} ${content ?? ''} ${ad ?? ''}` };
  if (content) {
    const base = directoryOf(config.sourceUrl);
    policy.contentUri = (uri) => {
      const rest = pathAfter(base, uri);
      return rest === undefined ? uri : joinPrefix(content, rest);
    };
  }
  if (ad) {
    const base = publicUrl ? directoryOf(publicUrl) : undefined;
    policy.adUri = (uri) => {
      // the engine's own routes are root-relative (/v1/segment/…, /v1/static/…): their path is the rest
      if (uri.startsWith('/') && !uri.startsWith('//')) return joinPrefix(ad, uri);
      const rest = base === undefined ? undefined : pathAfter(base, uri);
      return rest === undefined ? uri : joinPrefix(ad, rest);
    };
  }
  return policy;
}

/** `prefix` and `path` joined by exactly one slash; the path's query and fragment kept as written. */
export function joinPrefix(prefix: string, path: string): string {
  return `${prefix.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

type Directory = { origin: string; path: string };

/** A URL as the directory it names (source_url is joined as a directory: playback-path.ts originUrlOf), query dropped. */
function directoryOf(url: string): Directory | undefined {
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)([^?#]*)/i.exec(url);
  if (!m) return undefined;
  const path = m[2] ?? '';
  return { origin: m[1]!.toLowerCase(), path: path.endsWith('/') ? path : `${path}/` };
}

/** The part of an absolute URI after the directory (query kept), or undefined when the URI is outside it. */
function pathAfter(dir: Directory | undefined, uri: string): string | undefined {
  if (!dir || uri.length < dir.origin.length || uri.slice(0, dir.origin.length).toLowerCase() !== dir.origin) return undefined;
  const rest = uri.slice(dir.origin.length);
  const path = rest === '' || rest.startsWith('?') || rest.startsWith('#') ? `/${rest}` : rest;
  return path.startsWith(dir.path) ? path.slice(dir.path.length) : undefined;
}
