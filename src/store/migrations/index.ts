import type { Migration } from 'kysely';
import * as m0001 from './0001-foundation.js';

/** Every migration, in order. A resource adds its own file and one line here. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
};
