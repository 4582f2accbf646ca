import type { Kysely } from 'kysely';

// Managed inputs, connected devices (spec 2.4, 3.4) and the channel status events counted by statistics
// (spec 4.2.10). Portable column types: text ids, JSON as text, epoch ms as bigint, booleans as 0/1.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('channel_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('channel_events_org_at').on('channel_events').columns(['organization_id', 'at']).execute();

  await db.schema
    .createTable('devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('settings_version', 'integer')
    .addColumn('desired_settings', 'text')
    .addColumn('desired_settings_version', 'integer')
    .addColumn('last_seen_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('devices_org').on('devices').column('organization_id').execute();

  await db.schema
    .createTable('managed_inputs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('protocol', 'text')
    // unique: spec 8 "managed inputs per connected device: one"; NULLs (virtual inputs) never collide
    .addColumn('device_id', 'text', (c) => c.unique())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('cidrs', 'text', (c) => c.notNull())
    .addColumn('source_url', 'text')
    .addColumn('username', 'text')
    .addColumn('password_encrypted', 'text')
    .addColumn('ingest_url', 'text')
    .addColumn('stream_key', 'text')
    // unique: an SRT/RIST/RTP listener port belongs to one input for its whole life
    .addColumn('ingest_port', 'integer', (c) => c.unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('managed_inputs_org').on('managed_inputs').column('organization_id').execute();
}
