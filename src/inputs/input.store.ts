// Managed inputs in the database. The password of a PULL source is sealed with the key vault and never
// leaves the store in clear except through `sourcePassword` (for the channel runtime).
import type { Db, Tx } from '../../kernel/store/database.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import type { InputType, Protocol } from './input.schema.js';
import type { IngestAllocation } from './ingest.js';

export interface ManagedInputTable {
  id: string;
  organization_id: string;
  name: string;
  type: string;
  protocol: string | null;
  device_id: string | null;
  region: string;
  /** JSON array of CIDR strings */
  cidrs: string;
  source_url: string | null;
  username: string | null;
  password_encrypted: string | null;
  ingest_url: string | null;
  stream_key: string | null;
  ingest_port: number | null;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    managed_inputs: ManagedInputTable;
  }
}

export interface ManagedInput {
  id: string;
  name: string;
  type: InputType;
  protocol: Protocol | undefined;
  deviceId: string | undefined;
  region: string;
  cidrs: string[];
  url: string | undefined;
  username: string | undefined;
  hasPassword: boolean;
  ingest: IngestAllocation;
  createdAt: number;
  updatedAt: number;
}

/** A new input as the service built it: the read shape minus derived fields, plus what only the store sees. */
export type NewInput = Omit<ManagedInput, 'hasPassword' | 'createdAt' | 'updatedAt'> & {
  organizationId: string;
  passwordSealed: string | undefined;
  now: number;
};

export interface InputChange {
  name?: string;
  cidrs?: string[];
  url?: string;
  username?: string | null;
  passwordSealed?: string | null;
}

function toInput(row: ManagedInputTable): ManagedInput {
  return {
    id: row.id,
    name: row.name,
    type: row.type as InputType,
    protocol: (row.protocol ?? undefined) as Protocol | undefined,
    deviceId: row.device_id ?? undefined,
    region: row.region,
    cidrs: fromJson<string[]>(row.cidrs, []),
    url: row.source_url ?? undefined,
    username: row.username ?? undefined,
    hasPassword: row.password_encrypted !== null,
    ingest: {
      url: row.ingest_url ?? undefined,
      streamKey: row.stream_key ?? undefined,
      port: row.ingest_port === null ? undefined : Number(row.ingest_port),
    },
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export class InputStore {
  constructor(private readonly db: Db | Tx) {}

  async insert(input: NewInput): Promise<ManagedInput> {
    const row: ManagedInputTable = {
      id: input.id,
      organization_id: input.organizationId,
      name: input.name,
      type: input.type,
      protocol: input.protocol ?? null,
      device_id: input.deviceId ?? null,
      region: input.region,
      cidrs: toJson(input.cidrs),
      source_url: input.url ?? null,
      username: input.username ?? null,
      password_encrypted: input.passwordSealed ?? null,
      ingest_url: input.ingest.url ?? null,
      stream_key: input.ingest.streamKey ?? null,
      ingest_port: input.ingest.port ?? null,
      created_at: input.now,
      updated_at: input.now,
    };
    await this.db.insertInto('managed_inputs').values(row).execute();
    return toInput(row);
  }

  async list(organizationId: string): Promise<ManagedInput[]> {
    const rows = await this.db.selectFrom('managed_inputs').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toInput);
  }

  async get(organizationId: string, id: string): Promise<ManagedInput | undefined> {
    const row = await this.db.selectFrom('managed_inputs').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return row ? toInput(row) : undefined;
  }

  /** The sealed password of a PULL source, for the runtime that fetches it. */
  async sealedPassword(organizationId: string, id: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('managed_inputs').select('password_encrypted').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return row?.password_encrypted ?? undefined;
  }

  async byDevice(organizationId: string, deviceId: string): Promise<ManagedInput | undefined> {
    const row = await this.db.selectFrom('managed_inputs').selectAll().where('organization_id', '=', organizationId).where('device_id', '=', deviceId).executeTakeFirst();
    return row ? toInput(row) : undefined;
  }

  /** Every listener port in use, across organizations: ports are one machine's (or one cluster's) resource. */
  async usedPorts(): Promise<Set<number>> {
    const rows = await this.db.selectFrom('managed_inputs').select('ingest_port').where('ingest_port', 'is not', null).execute();
    return new Set(rows.map((row) => Number(row.ingest_port)));
  }

  async update(organizationId: string, id: string, change: InputChange, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('managed_inputs')
      .set({
        updated_at: now,
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.cidrs !== undefined ? { cidrs: toJson(change.cidrs) } : {}),
        ...(change.url !== undefined ? { source_url: change.url } : {}),
        ...(change.username !== undefined ? { username: change.username } : {}),
        ...(change.passwordSealed !== undefined ? { password_encrypted: change.passwordSealed } : {}),
      })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async remove(organizationId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('managed_inputs').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
