import type { Kysely } from 'kysely';

// Broker channel manager (spec 2.8–2.10, 4.3–4.5): channels, their listings, playlists. Portable column types:
// text ids, JSON as text, epoch ms as bigint, listing times as Unix seconds (bigint), 0/1 as integer.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('broker_channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('external_url', 'text')
    .addColumn('has_ads', 'integer', (c) => c.notNull())
    .addColumn('adinsert_id', 'text')
    .addColumn('allowed_users', 'text', (c) => c.notNull())
    .addColumn('allowed_roles', 'text', (c) => c.notNull())
    .addColumn('restricted_for', 'text', (c) => c.notNull())
    .addColumn('loop_interval', 'double precision')
    .addColumn('image_url', 'text')
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('broker_channels_org').on('broker_channels').columns(['organization_id', 'created_at']).execute();

  await db.schema
    .createTable('broker_playlists')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('color', 'text')
    .addColumn('image_url', 'text')
    .addColumn('sources', 'text', (c) => c.notNull())
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('broker_playlists_org').on('broker_playlists').columns(['organization_id', 'created_at']).execute();

  await db.schema
    .createTable('broker_listings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('channel_id', 'text', (c) => c.notNull().references('broker_channels.id').onDelete('cascade'))
    .addColumn('start_at', 'bigint', (c) => c.notNull())
    .addColumn('end_at', 'bigint', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('color', 'text')
    .addColumn('image_url', 'text')
    .addColumn('playlist_id', 'text')
    .addColumn('vod_id', 'text')
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('broker_listings_channel').on('broker_listings').columns(['channel_id', 'start_at']).execute();
  await db.schema.createIndex('broker_listings_playlist').on('broker_listings').columns(['playlist_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('broker_listings').execute();
  await db.schema.dropTable('broker_playlists').execute();
  await db.schema.dropTable('broker_channels').execute();
}
