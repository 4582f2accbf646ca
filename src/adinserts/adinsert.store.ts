import type { Db } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';
import { applyPolicies, type AdinsertConfig, type AdinsertCreateInput, type AdinsertType, type AdinsertUpdateInput, type AdPolicies } from './adinsert.schema.js';

export interface AdinsertTable {
  id: string;
  organization_id: string;
  name: string;
  ad_server: string;
  type: string;
  source_url: string;
  slate_ad: string | null;
  /** migration 0011; null: no cap */
  ad_server_max_rps: number | null;
  /** migration 0012; null: stitched */
  insertion_mode?: string | null;
  /** migration 0012; null: 1 (sessions may choose) */
  insertion_mode_override?: number | null;
  /** migration 0013: the ad-operations policies as JSON (AdPolicies); null: none set */
  ad_policies?: string | null;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    adinserts: AdinsertTable;
  }
}

/** The stored policies; a column unreadable as JSON counts as none set rather than failing every playlist. */
function policiesOf(row: Pick<AdinsertTable, 'ad_policies'>): AdPolicies {
  if (!row.ad_policies) return {};
  try {
    const parsed: unknown = JSON.parse(row.ad_policies);
    return parsed && typeof parsed === 'object' ? parsed as AdPolicies : {};
  } catch {
    return {};
  }
}

function policiesColumn(policies: AdPolicies): string | null {
  return Object.keys(policies).length > 0 ? JSON.stringify(policies) : null;
}

function toConfig(row: AdinsertTable): AdinsertConfig {
  const config: AdinsertConfig = {
    ...policiesOf(row),
    guid: row.id, organizationId: row.organization_id, name: row.name, adServer: row.ad_server,
    type: row.type as AdinsertType, sourceUrl: row.source_url,
    insertionMode: row.insertion_mode === 'guided' ? 'guided' : 'stitched',
    insertionModeOverride: row.insertion_mode_override === null || row.insertion_mode_override === undefined || Number(row.insertion_mode_override) !== 0,
    createdAt: Number(row.created_at), updatedAt: Number(row.updated_at),
  };
  if (row.slate_ad) config.slateAd = row.slate_ad;
  if (row.ad_server_max_rps !== null && row.ad_server_max_rps !== undefined) config.adServerMaxRps = Number(row.ad_server_max_rps);
  return config;
}

/** The columns an update sets besides the policies (spec 4.6: absent optional fields are kept). */
function updateOf(input: AdinsertUpdateInput, now: number): Partial<AdinsertTable> {
  const set: Partial<AdinsertTable> = { name: input.name, ad_server: input.ad_server, type: input.type, updated_at: now };
  if (input.source_url !== undefined) set.source_url = input.source_url;
  if (input.slate_ad !== undefined) set.slate_ad = input.slate_ad;
  if (input.ad_server_max_rps !== undefined) set.ad_server_max_rps = input.ad_server_max_rps;
  if (input.insertion_mode !== undefined) set.insertion_mode = input.insertion_mode;
  if (input.insertion_mode_override !== undefined) set.insertion_mode_override = Number(input.insertion_mode_override);
  return set;
}

export class AdinsertStore {
  constructor(private readonly db: Db) {}

  async create(organizationId: string, input: AdinsertCreateInput, now: number): Promise<AdinsertConfig> {
    const row: AdinsertTable = {
      id: newId(), organization_id: organizationId, name: input.name, ad_server: input.ad_server, type: input.type,
      source_url: input.source_url, slate_ad: input.slate_ad ?? null, ad_server_max_rps: input.ad_server_max_rps ?? null,
      insertion_mode: input.insertion_mode ?? null, insertion_mode_override: input.insertion_mode_override === undefined ? null : Number(input.insertion_mode_override),
      ad_policies: policiesColumn(applyPolicies({}, input)), created_at: now, updated_at: now,
    };
    await this.db.insertInto('adinserts').values(row).execute();
    return toConfig(row);
  }

  async list(organizationId: string): Promise<AdinsertConfig[]> {
    const rows = await this.db.selectFrom('adinserts').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').execute();
    return rows.map(toConfig);
  }

  /** Any organization's configuration: the playback path carries only the guid. */
  async getAny(guid: string): Promise<AdinsertConfig | undefined> {
    const row = await this.db.selectFrom('adinserts').selectAll().where('id', '=', guid).executeTakeFirst();
    return row ? toConfig(row) : undefined;
  }

  async get(organizationId: string, guid: string): Promise<AdinsertConfig | undefined> {
    const row = await this.db.selectFrom('adinserts').selectAll().where('organization_id', '=', organizationId).where('id', '=', guid).executeTakeFirst();
    return row ? toConfig(row) : undefined;
  }

  /**
   * One transaction. The plain columns are written first: on PostgreSQL that locks the row, so the policies read next
   * are the latest and a concurrent update waits instead of being merged away (SQLite serializes writers anyway).
   */
  async update(organizationId: string, guid: string, input: AdinsertUpdateInput, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const mine = trx.updateTable('adinserts').where('organization_id', '=', organizationId).where('id', '=', guid);
      const result = await mine.set(updateOf(input, now)).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      const row = await trx.selectFrom('adinserts').select('ad_policies').where('id', '=', guid).executeTakeFirstOrThrow();
      await mine.set({ ad_policies: policiesColumn(applyPolicies(policiesOf(row), input)) }).execute();
      return true;
    });
  }

  async remove(organizationId: string, guid: string): Promise<boolean> {
    const result = await this.db.deleteFrom('adinserts').where('organization_id', '=', organizationId).where('id', '=', guid).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
