import type { Kysely } from 'kysely';

// An adinsert configuration's ad-operations policies (issue 31): personalization threshold, avail suppression,
// bumpers, live pre-roll, ad-marker passthrough and CDN prefixes. One JSON text column, not nine: the fields are read
// together with the configuration and never queried on their own, and SQLite and PostgreSQL both store text. Null:
// no policy set, today's behaviour.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('adinserts').addColumn('ad_policies', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('adinserts').dropColumn('ad_policies').execute();
}
