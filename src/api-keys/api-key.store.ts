import type { Db } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';
import type { KeyVault } from './key-vault.js';

export interface ApiKeyTable {
  id: string;
  organization_id: string;
  /** broker keys and live keys share the table; the kind only chooses the answer shapes */
  kind: string;
  name: string;
  active: number;
  lookup_hash: string;
  value_encrypted: string;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    api_keys: ApiKeyTable;
  }
}

export type ApiKeyKind = 'broker' | 'live';

export interface ApiKey {
  id: string;
  organizationId: string;
  kind: ApiKeyKind;
  name: string;
  active: boolean;
  value: string;
  createdAt: number;
  updatedAt: number;
}

export class ApiKeyStore {
  constructor(
    private readonly db: Db,
    private readonly vault: KeyVault,
  ) {}

  private toKey(row: ApiKeyTable): ApiKey {
    return {
      id: row.id,
      organizationId: row.organization_id,
      kind: row.kind === 'live' ? 'live' : 'broker',
      name: row.name,
      active: row.active === 1,
      value: this.vault.decrypt(row.value_encrypted),
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    };
  }

  async create(input: { organizationId: string; kind: ApiKeyKind; name: string; active: boolean; createdBy?: string; now: number }): Promise<ApiKey> {
    const value = this.vault.newKeyValue();
    const row: ApiKeyTable = {
      id: newId(),
      organization_id: input.organizationId,
      kind: input.kind,
      name: input.name,
      active: input.active ? 1 : 0,
      lookup_hash: this.vault.lookupHash(value),
      value_encrypted: this.vault.encrypt(value),
      created_by: input.createdBy ?? null,
      created_at: input.now,
      updated_at: input.now,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return this.toKey(row);
  }

  async list(organizationId: string, kind: ApiKeyKind): Promise<ApiKey[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('kind', '=', kind)
      .orderBy('created_at')
      .execute();
    return rows.map((row) => this.toKey(row));
  }

  async get(organizationId: string, kind: ApiKeyKind, id: string): Promise<ApiKey | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('kind', '=', kind)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? this.toKey(row) : undefined;
  }

  async update(organizationId: string, kind: ApiKeyKind, id: string, change: { name?: string; active?: boolean }, now: number): Promise<ApiKey | undefined> {
    const set: Partial<ApiKeyTable> = { updated_at: now };
    if (change.name !== undefined) set.name = change.name;
    if (change.active !== undefined) set.active = change.active ? 1 : 0;
    await this.db
      .updateTable('api_keys')
      .set(set)
      .where('organization_id', '=', organizationId)
      .where('kind', '=', kind)
      .where('id', '=', id)
      .execute();
    return this.get(organizationId, kind, id);
  }

  async remove(organizationId: string, kind: ApiKeyKind, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('api_keys')
      .where('organization_id', '=', organizationId)
      .where('kind', '=', kind)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The active key with this value, looked up by hash so the value itself is never queried. */
  async findActiveByValue(value: string): Promise<ApiKey | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('lookup_hash', '=', this.vault.lookupHash(value))
      .where('active', '=', 1)
      .executeTakeFirst();
    return row ? this.toKey(row) : undefined;
  }
}
