import type { Db } from '../../kernel/store/database.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';
import type { MetaField, MetaGroup, MetaGroupInput } from './meta-group.schema.js';

export interface MetaGroupTable {
  id: string;
  organization_id: string;
  attachment: string;
  name: string;
  fields: string;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    meta_groups: MetaGroupTable;
  }
}

function toGroup(row: MetaGroupTable): MetaGroup {
  return {
    guid: row.id,
    attachment: row.attachment,
    name: row.name,
    fields: fromJson<MetaField[]>(row.fields, []),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export class MetaGroupStore {
  constructor(private readonly db: Db) {}

  async create(organizationId: string, input: MetaGroupInput, now: number): Promise<MetaGroup> {
    const row: MetaGroupTable = {
      id: newId(),
      organization_id: organizationId,
      attachment: input.attachment,
      name: input.name,
      fields: toJson(input.fields),
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('meta_groups').values(row).execute();
    return toGroup(row);
  }

  async list(organizationId: string, attachment?: string): Promise<MetaGroup[]> {
    let query = this.db.selectFrom('meta_groups').selectAll().where('organization_id', '=', organizationId);
    if (attachment) query = query.where('attachment', '=', attachment);
    return (await query.orderBy('created_at').execute()).map(toGroup);
  }

  async get(organizationId: string, id: string): Promise<MetaGroup | undefined> {
    const row = await this.db.selectFrom('meta_groups').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return row ? toGroup(row) : undefined;
  }

  async update(organizationId: string, id: string, input: MetaGroupInput, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('meta_groups')
      .set({ attachment: input.attachment, name: input.name, fields: toJson(input.fields), updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async remove(organizationId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('meta_groups').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
