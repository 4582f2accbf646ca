import type { Kysely } from 'kysely';

// Leases of running queue jobs (issue 20): a worker renews its jobs' rows every few seconds, so the other workers see
// a worker killed with -9 within seconds instead of at the queue's job expiry (hours for long encodes).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('job_leases')
    .addColumn('job_id', 'text', (c) => c.primaryKey())
    .addColumn('queue', 'text', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('renewed_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('job_leases_renewed').on('job_leases').column('renewed_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('job_leases').execute();
}
