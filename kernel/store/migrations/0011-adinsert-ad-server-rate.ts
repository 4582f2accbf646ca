import type { Kysely } from 'kysely';

// An adinsert configuration's ad_server_max_rps (issue 28): the ad decisions a second one ssai process sends to its ad
// server, at most. Nullable (no cap); integer is portable between SQLite and PostgreSQL.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('adinserts').addColumn('ad_server_max_rps', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('adinserts').dropColumn('ad_server_max_rps').execute();
}
