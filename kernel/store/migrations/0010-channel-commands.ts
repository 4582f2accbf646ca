import type { Kysely } from 'kysely';

// Channels in a cluster (issue 18/20 follow-up): an api process without the packager role hands start/stop/ad break/
// input switch to a packager process through command rows; packagers heartbeat so a missing one is seen at once, and
// the packager that started a channel is recorded so its later commands go to it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('channel_commands')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    // null: any packager may claim it (a start); otherwise only the packager that runs the channel
    .addColumn('target', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('channel_commands_pending').on('channel_commands').columns(['status', 'created_at']).execute();
  await db.schema
    .createTable('channel_owners')
    .addColumn('workflow_id', 'text', (c) => c.primaryKey())
    .addColumn('packager_id', 'text', (c) => c.notNull())
    .addColumn('since', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('packager_processes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('public_url', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('beat_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('packager_processes').execute();
  await db.schema.dropTable('channel_owners').execute();
  await db.schema.dropTable('channel_commands').execute();
}
