import type { Kysely } from 'kysely';

// An adinsert configuration's insertion mode (issue 30): `stitched` (ads in the playlist, the default) or `guided`
// (HLS Interstitials: the playlist points players at per-viewer asset lists), and whether a session may choose the
// other one. Nullable text and integer: null is the default, portable between SQLite and PostgreSQL.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('adinserts').addColumn('insertion_mode', 'text').execute();
  await db.schema.alterTable('adinserts').addColumn('insertion_mode_override', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('adinserts').dropColumn('insertion_mode_override').execute();
  await db.schema.alterTable('adinserts').dropColumn('insertion_mode').execute();
}
