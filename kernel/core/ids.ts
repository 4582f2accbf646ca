import { randomUUID } from 'node:crypto';

/** Broker resources carry `guid`s, live resources `id`s; both are UUID v4 strings. */
export function newId(): string {
  return randomUUID();
}
