// The vitest projects (test/projects.ts): every test file runs exactly once in `npm test`, and the fast projects
// (unit, api: `npm run test:fast`) reach none of the helpers that start the encoder or the browser. (This file does not
// name those tools: test/projects.ts reads the words in test sources, outside comments.)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.js';
import { classify, localClosure, markedProject, NEEDS_MORE, PROJECTS, testFiles, type ProjectName } from '../projects.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Helpers and fixtures that start what a project must not use (by path: a second look beside the markers). */
const ENGINE_HELPERS = ['test/helpers/engine.ts', 'test/helpers/engine-process.ts', 'test/helpers/redis.ts',
  'test/cluster/cluster.ts', 'scripts/console-types.ts'];
const MEDIA_HELPERS = ['fixtures/generate-media.ts', 'fixtures/origin-server.ts', 'fixtures/ll-origin-server.ts',
  'fixtures/vast-server.ts', 'test/ssai/setup.ts', 'test/packager/ingest/ingest-harness.ts', 'test/unit/vod-encoder/helpers.ts',
  'test/e2e/live/live-helpers.ts'];
const BROWSER_HELPERS = ['test/helpers/hls-player.ts', 'test/console/helpers.ts'];
const FORBIDDEN: Record<ProjectName, string[]> = {
  unit: [...ENGINE_HELPERS, ...MEDIA_HELPERS, ...BROWSER_HELPERS],
  api: [...MEDIA_HELPERS, ...BROWSER_HELPERS],
  media: BROWSER_HELPERS,
  browser: [],
};

const projects = (config.test?.projects ?? []) as Array<{ test: { name: ProjectName; include: string[] } }>;

describe('vitest projects', () => {
  it('are unit, api, media and browser', () => {
    expect(projects.map((p) => p.test.name)).toEqual([...PROJECTS]);
  });

  it('hold every test file exactly once', () => {
    const listed = projects.flatMap((p) => p.test.include);
    const files = testFiles(root);
    expect(files.length).toBeGreaterThan(100);
    expect([...listed].sort()).toEqual(files);
  });

  it('keep the engine, the encoder and the browser helpers out of the projects that must not use them', () => {
    const wrong: string[] = [];
    for (const project of projects) {
      for (const file of project.test.include) {
        const reached = localClosure(root, file).filter((f) => FORBIDDEN[project.test.name].includes(f));
        if (reached.length) wrong.push(`${file} (${project.test.name}) reaches ${reached.join(', ')}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('place a file by what its helpers start', () => {
    expect(classify(root, 'test/unit/ssai/scte35.test.ts').project).toBe('unit');
    expect(classify(root, 'test/api/foundation/system.test.ts').project).toBe('api');
    expect(classify(root, 'test/unit/ssai/session-store.test.ts').project).toBe('api');
    expect(classify(root, 'test/ssai/beacons.test.ts').project).toBe('media');
    expect(classify(root, 'test/unit/vod-encoder/probe.test.ts').project).toBe('media');
    expect(classify(root, 'test/e2e/vod-playback.test.ts').project).toBe('browser');
    expect(classify(root, 'test/console/login.test.ts').project).toBe('browser');
  });

  it('name in NEEDS_MORE only test files that it moves up', () => {
    const files = new Set(testFiles(root));
    for (const [file, more] of Object.entries(NEEDS_MORE)) {
      expect(files.has(file), file).toBe(true);
      expect(PROJECTS.indexOf(markedProject(root, file).project), file).toBeLessThan(PROJECTS.indexOf(more.project));
      expect(classify(root, file).project, file).toBe(more.project);
    }
  });
});
