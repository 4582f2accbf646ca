import type { Kysely } from 'kysely';

// Ad-insertion configurations (spec 2.11, 4.6). Portable column types: text ids, epoch ms as bigint.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('adinserts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('ad_server', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('source_url', 'text', (c) => c.notNull())
    .addColumn('slate_ad', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('adinserts_org').on('adinserts').columns(['organization_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('adinserts').execute();
}
