// An independent reading of a media playlist for the pass-through tests (issue 26 §3): m3u8-parser's object, with
// every URI it found made absolute by WHATWG URL against the playlist's own address, and the delta-update attributes
// the proxy withdraws on purpose (CAN-SKIP-UNTIL, CAN-SKIP-DATERANGES) left out.
import { Parser } from 'm3u8-parser';

const URI_KEYS = new Set(['uri', 'xAssetUri', 'xAssetList']);

function absolute(value: unknown, base: string | undefined): unknown {
  if (Array.isArray(value)) return value.map((v) => absolute(v, base));
  if (value instanceof Uint32Array) return [...value];
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = URI_KEYS.has(k) && typeof v === 'string' && base !== undefined ? new URL(v, base).href : absolute(v, base);
    }
    return out;
  }
  return value;
}

export type ParsedPlaylist = Record<string, unknown> & { segments: Array<Record<string, unknown>>; targetDuration?: number };

/** The playlist as m3u8-parser reads it; URIs resolved against base when given. */
export function parsePlaylist(text: string, base?: string): ParsedPlaylist {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  const manifest = absolute(parser.manifest, base) as ParsedPlaylist;
  const control = manifest.serverControl as Record<string, unknown> | undefined;
  if (control) { delete control.canSkipUntil; delete control.canSkipDateranges; delete control.canSkipDateRanges; }
  return manifest;
}
