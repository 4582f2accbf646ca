// What playlists and listings may play: a VOD source of the organization whose encode is complete with HLS.
import type { Db, Tx } from '../../kernel/store/database.js';
import { VodStore, type VodSource } from '../vod/vod.store.js';

export type VodCheck =
  | { kind: 'playable'; source: VodSource; duration: number }
  | { kind: 'missing' }
  | { kind: 'not-playable'; status: string };

export async function checkPlayableVod(db: Db | Tx, organizationId: string, guid: string): Promise<VodCheck> {
  const source = await new VodStore(db as Db, () => Date.now()).get(guid, organizationId, db);
  if (!source) return { kind: 'missing' };
  const records = source.records;
  if (source.status !== 'complete' || !records?.formats.hasHls || !(records.durationSec > 0)) return { kind: 'not-playable', status: source.status };
  return { kind: 'playable', source, duration: records.durationSec };
}

/** The `meta` of a playlist source in reads (spec 2.10): the VOD's standard fields. */
export function sourceMeta(source: VodSource | undefined): { description: string | null; type: string; title: string | null; imageUrl: string | null } {
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    description: text(source?.meta.description), type: text(source?.meta.type) ?? 'source',
    title: text(source?.meta.title), imageUrl: text(source?.meta.imageUrl),
  };
}
