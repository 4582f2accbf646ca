import { describe, expect, it } from 'vitest';
import type { AvailRecord } from '../../../ssai/decide/avail-record.js';
import { oneRecordPerBreak } from '../../../ssai/serve/break-places.js';

const record = (id: string, index: number, startSegmentIndex: number, startPdtMs?: number): AvailRecord =>
  ({ id, index, startSegmentIndex, endSegmentIndex: startSegmentIndex + 5, duration: 10, slotDuration: 2, ads: [], skipped: [], ...(startPdtMs !== undefined ? { startPdtMs } : {}) }) as AvailRecord;

describe('oneRecordPerBreak', () => {
  it('hands back the list itself when every record is its own break, on every call', () => {
    const records = [record('a', 0, 10, 1_000_000), record('b', 1, 20, 1_020_000), record('c', 2, 30)];
    expect(oneRecordPerBreak(records, 2)).toBe(records);
    expect(oneRecordPerBreak(records, 2)).toBe(records);
    expect(oneRecordPerBreak(records, 6)).toBe(records);
  });

  it('keeps the first decided of two records of one break (by date, or by place without dates), whatever the order', () => {
    const byDate = [record('dr-1', 1, 10, 1_000_500), record('a', 0, 12, 1_000_000), record('b', 2, 40, 1_060_000)];
    for (let call = 0; call < 2; call++) expect(oneRecordPerBreak(byDate, 2).map((r) => r.id)).toEqual(['a', 'b']);
    const byPlace = [record('x', 3, 50), record('y', 3, 50), record('z', 4, 60)];
    expect(oneRecordPerBreak(byPlace, 2).map((r) => r.id)).toEqual(['x', 'z']);
    // compared again at another target duration: half a slot of 6 s still holds the two dates 500 ms apart
    expect(oneRecordPerBreak(byDate, 6).map((r) => r.id)).toEqual(['a', 'b']);
  });
});
