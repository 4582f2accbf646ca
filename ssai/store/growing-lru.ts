// An LRU bounded by its entry count whose slots grow with use (issue 19 point 4, memory per viewer). lru-cache given
// `max` allocates every slot up front (keys, values, links; with a TTL two number arrays, which turn to 8-byte
// doubles at the first timestamp): ~5 MB for a TTL cache of 200,000 entries, held with 10 viewers as with 100,000.
// Bounded by `maxSize` with every entry of size 1 instead, it allocates as entries arrive and evicts the same way.
import { LRUCache } from 'lru-cache';

export function growingLru<K extends {}, V extends {}>(maxEntries: number, options: Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {}): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: maxEntries, sizeCalculation: () => 1 });
}
