// Reads an encoded VOD's HLS (the CMAF master and media playlists the encoder wrote) into a LinearAsset. Encodes write
// a new versioned folder each time, so an asset read once never changes: the cache is keyed by that folder.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { makeAsset, type LinearAsset, type Track, type VariantTrack } from './asset.js';
import type { AssetLocation } from '../../kernel/seams/linear-schedule.js';


async function track(loc: AssetLocation, uri: string): Promise<Track> {
  const scanned = scanMediaPlaylist(await readFile(path.join(loc.dir, uri), 'utf8'));
  if (!scanned.playlist) throw new Error(`${loc.id}: ${uri} is not a media playlist (${scanned.error.message})`);
  const segments = scanned.playlist.segments;
  const abs = (u: string) => new URL(u, `${loc.baseUrl.replace(/\/*$/, '/')}${uri}`).href;
  const init = segments[0]?.map?.uri;
  return { ...(init ? { init: abs(init) } : {}), uris: segments.map((s) => abs(s.uri)), durations: segments.map((s) => s.duration) };
}

export async function loadAsset(loc: AssetLocation): Promise<LinearAsset> {
  const scanned = scanMultivariantPlaylist(await readFile(path.join(loc.dir, loc.master ?? 'master.m3u8'), 'utf8'));
  if (!scanned.playlist) throw new Error(`${loc.id}: no multivariant playlist (${scanned.error.message})`);
  const variants: VariantTrack[] = [];
  for (const v of scanned.playlist.variants) {
    const [w, h] = (v.resolution ?? '').split('x').map(Number);
    const codecs = v.attrs.CODECS;
    variants.push({ ...(await track(loc, v.uri)), bandwidth: v.bandwidth, ...(w && h ? { width: w, height: h } : {}), ...(codecs ? { codecs } : {}) });
  }
  const audioUri = scanned.playlist.renditions.find((r) => r.type === 'AUDIO' && r.uri)?.uri;
  return makeAsset(loc.id, variants, audioUri ? await track(loc, audioUri) : undefined);
}

export class AssetCache {
  private readonly cache = new LRUCache<string, Promise<LinearAsset>>({ max: 5_000 });

  get(loc: AssetLocation): Promise<LinearAsset> {
    const key = `${loc.dir}|${loc.master ?? ''}`;
    let hit = this.cache.get(key);
    if (!hit) {
      hit = loadAsset(loc);
      hit.catch(() => this.cache.delete(key));
      this.cache.set(key, hit);
    }
    return hit;
  }
}
