// A session track's marks as the store keeps them (issue 32): pairs, read back the same; the object form of a proxy
// from before read too; anything malformed reads as no mark rather than failing the playlist.
import { describe, expect, it } from 'vitest';
import { marksFromStored, marksToStored } from '../../../ssai/serve/track-marks.js';
import { MemorySessionStore } from '../../../ssai/store/session-store.js';

describe('track marks', () => {
  it('round-trips through the store as [name, numbers] pairs, in their order', async () => {
    const marks = new Map<string, readonly number[]>([['@pdt-1767571328', [64]], ['pdt-1767571328', [63, 70]], ['@scte-1018', [184]]]);
    const store = new MemorySessionStore();
    await store.set('obs:s:0', marksToStored(marks), 60_000);
    const stored = await store.get<unknown>('obs:s:0');
    expect(stored).toEqual([['@pdt-1767571328', [64]], ['pdt-1767571328', [63, 70]], ['@scte-1018', [184]]]);
    expect([...marksFromStored(stored)]).toEqual([...marks]);
  });

  it('reads the object a proxy from before wrote (a session outlives an upgrade)', () => {
    expect([...marksFromStored({ '@pdt-1': [5], 'pdt-1': [4, 9] })]).toEqual([['@pdt-1', [5]], ['pdt-1', [4, 9]]]);
  });

  it('keeps the well-formed entries of a malformed value and drops the rest', () => {
    expect([...marksFromStored([['@a', [1]], ['@b', 'x'], [3, [1]], ['@c'], null, ['@d', [2, Number.NaN]], ['@e', [7]]])]).toEqual([['@a', [1]], ['@e', [7]]]);
    expect(marksFromStored('text').size).toBe(0);
    expect(marksFromStored(42).size).toBe(0);
    expect(marksFromStored({ '@a': 'x', '@b': [1] }).size).toBe(1);
  });
});
