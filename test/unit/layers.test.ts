import { describe, expect, it } from 'vitest';
import { importEdges, type ImportEdge } from '../../scripts/import-graph.js';

// The layer rule of docs/ARCHITECTURE.md (issue 29): the bottom (kernel/, and media/, the shared media toolbox) imports
// nothing above it; a part (src/ the control plane, ssai/, packager/, vod-encoder/) imports the bottom and no other
// part; only the wiring (wiring/) imports the parts, and nothing but tooling (test/, bench/, bin/, scripts/) imports
// the wiring. Parts talk through the seams the kernel declares (kernel/seams/*, ctx.services).
const BOTTOM = ['kernel', 'media'];
const PARTS = ['src', 'ssai', 'packager', 'vod-encoder'];
const WIRING = 'wiring';

/**
 * Arrows between parts that are known and waiting for their own step. Each names the files it covers and why; a new
 * arrow between parts fails even when it joins files of an exception's folders.
 */
const EXCEPTIONS: Array<{ from: string; to: readonly string[]; reason: string }> = [
  {
    from: 'ssai/',
    to: ['vod-encoder/prepare-creative.ts', 'vod-encoder/errors.ts'],
    reason: 'the proxy prepares ad creatives (and the slate) with the encoder\'s code: the creative preparation is a seam still to declare',
  },
  {
    from: 'src/vod/',
    to: ['vod-encoder/queue.ts', 'vod-encoder/records.types.ts', 'vod-encoder/errors.ts', 'vod-encoder/ffmpeg-runner.ts'],
    reason: 'the VOD control plane reads the encoder\'s queue and record types (EncodeQueue, VodRecords, EncodeProgress): they become a kernel seam once the ffmpeg runner has moved to the media toolbox',
  },
];

function excepted(edge: ImportEdge): boolean {
  return EXCEPTIONS.some((exception) => edge.from.startsWith(exception.from) && exception.to.includes(edge.to));
}

function describeEdge(edge: ImportEdge): string {
  return `${edge.from}:${edge.line} → ${edge.to}${edge.typeOnly ? ' (type)' : ''}`;
}

describe('layers (docs/ARCHITECTURE.md)', () => {
  const edges = importEdges().filter((edge) => edge.fromFolder !== edge.toFolder);

  it('finds the arrows it judges (the parser reads the sources)', () => {
    expect(edges.filter((edge) => edge.fromFolder === WIRING && PARTS.includes(edge.toFolder)).length).toBeGreaterThan(50);
    expect(edges.filter((edge) => PARTS.includes(edge.fromFolder) && edge.toFolder === 'kernel').length).toBeGreaterThan(100);
  });

  it('the bottom (kernel/, media/) imports nothing above it', () => {
    const offenders = edges.filter((edge) => BOTTOM.includes(edge.fromFolder) && !BOTTOM.includes(edge.toFolder));
    expect(offenders.map(describeEdge)).toEqual([]);
  });

  it('no part imports the wiring; only tooling does', () => {
    const offenders = edges.filter((edge) => edge.toFolder === WIRING && [...BOTTOM, ...PARTS].includes(edge.fromFolder));
    expect(offenders.map(describeEdge)).toEqual([]);
  });

  it('the packager imports no control plane: it reaches it through kernel seams', () => {
    const offenders = edges.filter((edge) => edge.fromFolder === 'packager' && edge.toFolder === 'src');
    expect(offenders.map(describeEdge)).toEqual([]);
  });

  it('a part imports no other part, but for the listed exceptions', () => {
    const offenders = edges.filter((edge) => PARTS.includes(edge.fromFolder) && PARTS.includes(edge.toFolder) && !excepted(edge));
    expect(offenders.map(describeEdge)).toEqual([]);
  });

  it('every listed exception is still in use (a step that removes one removes its entry)', () => {
    const unused = EXCEPTIONS.flatMap((exception) => exception.to.filter((to) => !edges.some((edge) => edge.from.startsWith(exception.from) && edge.to === to)).map((to) => `${exception.from} → ${to}`));
    expect(unused).toEqual([]);
  });
});
