import type { Db, Tx } from '../../kernel/store/database.js';
import type { StoredMeta } from '../meta-groups/attached-meta.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import type { BrokerChannel, ChannelInput, ChannelType } from './broker-channel.schema.js';

export interface BrokerChannelTable {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  active: number;
  type: string;
  external_url: string | null;
  has_ads: number;
  adinsert_id: string | null;
  allowed_users: string;
  allowed_roles: string;
  restricted_for: string;
  loop_interval: number | null;
  image_url: string | null;
  /** {selectedMetaGroupGuid?, values} */
  meta: string;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    broker_channels: BrokerChannelTable;
  }
}

function toChannel(row: BrokerChannelTable): BrokerChannel {
  const meta = fromJson<StoredMeta>(row.meta, { values: {} });
  const channel: BrokerChannel = {
    guid: row.id, organizationId: row.organization_id, name: row.name, description: row.description,
    active: Number(row.active) === 1 ? 1 : 0, type: row.type as ChannelType, hasAds: Number(row.has_ads) === 1 ? 1 : 0,
    allowedForUsers: fromJson<string[]>(row.allowed_users, []), allowedForRoles: fromJson<string[]>(row.allowed_roles, []),
    restrictedFor: fromJson<string[]>(row.restricted_for, []), meta: meta.values,
    createdAt: Number(row.created_at), updatedAt: Number(row.updated_at),
  };
  if (row.external_url) channel.externalUrl = row.external_url;
  if (row.adinsert_id) channel.adinsert = row.adinsert_id;
  if (row.loop_interval !== null && row.loop_interval !== undefined) channel.loopInterval = Number(row.loop_interval);
  if (row.image_url) channel.imageUrl = row.image_url;
  if (meta.selectedMetaGroupGuid) channel.selectedMetaGroupGuid = meta.selectedMetaGroupGuid;
  return channel;
}

function columns(input: ChannelInput): Omit<BrokerChannelTable, 'id' | 'organization_id' | 'created_at' | 'updated_at'> {
  const meta: StoredMeta = { values: input.meta ?? {} };
  if (input.selectedMetaGroupGuid) meta.selectedMetaGroupGuid = input.selectedMetaGroupGuid;
  return {
    name: input.name, description: input.description, active: input.active, type: input.type,
    external_url: input.externalUrl ?? null, has_ads: input.hasAds, adinsert_id: input.adinsert ?? null,
    allowed_users: toJson(input.allowedForUsers ?? []), allowed_roles: toJson(input.allowedForRoles ?? []),
    restricted_for: toJson(input.restrictedFor ?? []), loop_interval: input.loopInterval ?? null,
    image_url: input.imageUrl ?? null, meta: toJson(meta),
  };
}

export class BrokerChannelStore {
  constructor(private readonly db: Db) {}

  async create(trx: Tx, organizationId: string, id: string, input: ChannelInput, now: number): Promise<BrokerChannel> {
    const row: BrokerChannelTable = { id, organization_id: organizationId, ...columns(input), created_at: now, updated_at: now };
    await trx.insertInto('broker_channels').values(row).execute();
    return toChannel(row);
  }

  async list(organizationId: string): Promise<BrokerChannel[]> {
    const rows = await this.db.selectFrom('broker_channels').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toChannel);
  }

  async get(organizationId: string, id: string, db: Db | Tx = this.db): Promise<BrokerChannel | undefined> {
    const row = await db.selectFrom('broker_channels').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return row ? toChannel(row) : undefined;
  }

  /** Any organization's channel: the linear playback path carries only the guid (and its token). */
  async getAny(id: string): Promise<BrokerChannel | undefined> {
    const row = await this.db.selectFrom('broker_channels').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toChannel(row) : undefined;
  }

  async update(trx: Tx, organizationId: string, id: string, input: ChannelInput, now: number): Promise<boolean> {
    const result = await trx.updateTable('broker_channels').set({ ...columns(input), updated_at: now })
      .where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Deletes the channel and its listings in one transaction. */
  async remove(organizationId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('broker_listings').where('organization_id', '=', organizationId).where('channel_id', '=', id).execute();
      const result = await trx.deleteFrom('broker_channels').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    });
  }
}
