import type { Db, Tx } from '../../kernel/store/database.js';
import type { StoredMeta } from '../meta-groups/attached-meta.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';
import type { Listing, ListingInput } from './listing.schema.js';

export interface BrokerListingTable {
  id: string;
  organization_id: string;
  channel_id: string;
  /** Unix seconds (spec 2.9) */
  start_at: number;
  end_at: number;
  title: string;
  description: string | null;
  color: string | null;
  image_url: string | null;
  playlist_id: string | null;
  vod_id: string | null;
  /** {selectedMetaGroupGuid?, values} */
  meta: string;
  created_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    broker_listings: BrokerListingTable;
  }
}

function toListing(row: BrokerListingTable): Listing {
  const meta = fromJson<StoredMeta>(row.meta, { values: {} });
  const listing: Listing = { guid: row.id, channel: row.channel_id, start: Number(row.start_at), end: Number(row.end_at), title: row.title, meta: meta.values };
  if (row.description !== null) listing.description = row.description;
  if (row.color !== null) listing.color = row.color;
  if (row.image_url !== null) listing.imageUrl = row.image_url;
  if (row.playlist_id !== null) listing.playlist = row.playlist_id;
  if (row.vod_id !== null) listing.vod = row.vod_id;
  if (meta.selectedMetaGroupGuid) listing.selectedMetaGroupGuid = meta.selectedMetaGroupGuid;
  return listing;
}

export class ListingStore {
  constructor(private readonly db: Db) {}

  /**
   * Clears [start, end) of the channel inside the caller's transaction: listings inside it go, listings crossing an edge
   * are trimmed to it (one spanning the whole range is split in two), so what lies outside stays as it was.
   */
  async clearRange(trx: Tx, organizationId: string, channelId: string, start: number, end: number): Promise<number> {
    const rows = await trx.selectFrom('broker_listings').selectAll().where('organization_id', '=', organizationId).where('channel_id', '=', channelId)
      .where('start_at', '<', end).where('end_at', '>', start).execute();
    for (const row of rows) {
      const from = Number(row.start_at);
      const to = Number(row.end_at);
      const where = trx.updateTable('broker_listings').where('id', '=', row.id);
      if (from >= start && to <= end) await trx.deleteFrom('broker_listings').where('id', '=', row.id).execute();
      else if (from < start && to > end) {
        await where.set({ end_at: start }).execute();
        await trx.insertInto('broker_listings').values({ ...row, id: newId(), start_at: end }).execute();
      } else if (from < start) await where.set({ end_at: start }).execute();
      else await where.set({ start_at: end }).execute();
    }
    return rows.length;
  }

  /** Replaces what the channel had in [start, end) by `listings`, in the caller's transaction. */
  async replaceRange(trx: Tx, organizationId: string, channelId: string, start: number, end: number, listings: ListingInput[], now: number): Promise<void> {
    await this.clearRange(trx, organizationId, channelId, start, end);
    for (const l of listings) {
      const meta: StoredMeta = { values: l.meta ?? {} };
      if (l.selectedMetaGroupGuid) meta.selectedMetaGroupGuid = l.selectedMetaGroupGuid;
      await trx.insertInto('broker_listings').values({
        id: newId(), organization_id: organizationId, channel_id: channelId, start_at: l.start, end_at: l.end, title: l.title,
        description: l.description ?? null, color: l.color ?? null, image_url: l.imageUrl ?? null,
        playlist_id: l.playlist ?? null, vod_id: l.vod ?? null, meta: toJson(meta), created_at: now,
      }).execute();
    }
  }

  /** Listings overlapping [from, to) (either bound open), by start. */
  async list(channelId: string, from?: number, to?: number, db: Db | Tx = this.db): Promise<Listing[]> {
    let query = db.selectFrom('broker_listings').selectAll().where('channel_id', '=', channelId);
    if (to !== undefined) query = query.where('start_at', '<', to);
    if (from !== undefined) query = query.where('end_at', '>', from);
    return (await query.orderBy('start_at').execute()).map(toListing);
  }

  async playlistInUse(organizationId: string, playlistId: string, db: Db | Tx = this.db): Promise<boolean> {
    const row = await db.selectFrom('broker_listings').select('id').where('organization_id', '=', organizationId).where('playlist_id', '=', playlistId).executeTakeFirst();
    return row !== undefined;
  }
}
