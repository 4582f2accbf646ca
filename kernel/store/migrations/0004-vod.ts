import type { Kysely } from 'kysely';

// VOD sources (spec 2.12, 3.6) and the persisted encode job queue of the embedded engine (vod-encoder/queue-db.ts).
// Portable column types: text ids, JSON as text, epoch ms as bigint, booleans as 0/1.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('vod_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('progress', 'text')
    .addColumn('encode', 'integer', (c) => c.notNull())
    .addColumn('source_file', 'text')
    .addColumn('original_file_name', 'text')
    .addColumn('output_dir', 'text')
    .addColumn('records', 'text')
    .addColumn('captions', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('vod_sources_org').on('vod_sources').columns(['organization_id', 'created_at']).execute();
  await db.schema.createIndex('vod_sources_status').on('vod_sources').column('status').execute();

  await db.schema
    .createTable('encode_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('progress', 'text')
    .addColumn('output', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('encode_jobs_state').on('encode_jobs').columns(['state', 'priority', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('encode_jobs').execute();
  await db.schema.dropTable('vod_sources').execute();
}
