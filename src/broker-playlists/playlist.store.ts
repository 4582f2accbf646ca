import type { Db, Tx } from '../../kernel/store/database.js';
import type { StoredMeta } from '../meta-groups/attached-meta.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import type { Playlist, PlaylistInput, PlaylistSourceInput } from './playlist.schema.js';

export interface BrokerPlaylistTable {
  id: string;
  organization_id: string;
  name: string;
  title: string | null;
  description: string | null;
  color: string | null;
  image_url: string | null;
  sources: string;
  /** {selectedMetaGroupGuid?, values} */
  meta: string;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    broker_playlists: BrokerPlaylistTable;
  }
}

function toPlaylist(row: BrokerPlaylistTable): Playlist {
  const meta = fromJson<StoredMeta>(row.meta, { values: {} });
  const playlist: Playlist = {
    guid: row.id, organizationId: row.organization_id, name: row.name, sources: fromJson<PlaylistSourceInput[]>(row.sources, []),
    meta: meta.values, createdAt: Number(row.created_at), updatedAt: Number(row.updated_at),
  };
  if (row.title !== null) playlist.title = row.title;
  if (row.description !== null) playlist.description = row.description;
  if (row.color !== null) playlist.color = row.color;
  if (row.image_url !== null) playlist.imageUrl = row.image_url;
  if (meta.selectedMetaGroupGuid) playlist.selectedMetaGroupGuid = meta.selectedMetaGroupGuid;
  return playlist;
}

function columns(input: PlaylistInput): Omit<BrokerPlaylistTable, 'id' | 'organization_id' | 'created_at' | 'updated_at'> {
  const meta: StoredMeta = { values: input.meta ?? {} };
  if (input.selectedMetaGroupGuid) meta.selectedMetaGroupGuid = input.selectedMetaGroupGuid;
  return {
    name: input.name, title: input.title ?? null, description: input.description ?? null, color: input.color ?? null,
    image_url: input.imageUrl ?? null, sources: toJson(input.sources), meta: toJson(meta),
  };
}

export class PlaylistStore {
  constructor(private readonly db: Db) {}

  async create(trx: Tx, organizationId: string, id: string, input: PlaylistInput, now: number): Promise<void> {
    await trx.insertInto('broker_playlists').values({ id, organization_id: organizationId, ...columns(input), created_at: now, updated_at: now }).execute();
  }

  async list(organizationId: string): Promise<Playlist[]> {
    const rows = await this.db.selectFrom('broker_playlists').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toPlaylist);
  }

  async get(organizationId: string, id: string, db: Db | Tx = this.db): Promise<Playlist | undefined> {
    const row = await db.selectFrom('broker_playlists').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return row ? toPlaylist(row) : undefined;
  }

  async update(trx: Tx, organizationId: string, id: string, input: PlaylistInput, now: number): Promise<boolean> {
    const result = await trx.updateTable('broker_playlists').set({ ...columns(input), updated_at: now })
      .where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async remove(trx: Tx, organizationId: string, id: string): Promise<boolean> {
    const result = await trx.deleteFrom('broker_playlists').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
