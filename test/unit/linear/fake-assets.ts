import { makeAsset, type LinearAsset } from '../../../packager/linear/asset.js';

/** An asset of one video variant and audio with the given segment durations (seconds); URIs name asset and index. */
export function fakeAsset(id: string, durations: number[], variants = 1): LinearAsset {
  const track = (kind: string) => ({ init: `${id}/${kind}/init.mp4`, uris: durations.map((_, i) => `${id}/${kind}/${i}.m4s`), durations });
  return makeAsset(id, Array.from({ length: variants }, (_, v) => ({ ...track(`v${v}`), bandwidth: 100_000 * (v + 1), width: 160 * (v + 1), height: 90 * (v + 1) })), track('a'));
}
