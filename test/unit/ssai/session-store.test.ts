import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../../ssai/session-store.js';

describe('memory session store values', () => {
  it('reads back falsy values and null as stored, and undefined as absent (as Redis through JSON)', async () => {
    const store = new MemorySessionStore();
    for (const [key, value] of [['zero', 0], ['empty', ''], ['no', false], ['null', null]] as const) {
      await store.set(key, value, 600_000);
      expect(await store.get(key)).toBe(value);
    }
    await store.set('gone', { a: 1 }, 600_000);
    await store.set('gone', undefined, 600_000);
    expect(await store.get('gone')).toBeUndefined();
    expect(await store.setIfAbsent('null', 5, 600_000)).toEqual({ value: null, created: false });
    expect(await store.setIfAbsent('lock', 0, 1000)).toEqual({ value: 0, created: true });
    expect((await store.setIfAbsent('lock', 1, 1000)).value).toBe(0);
    await store.close();
  });
});
