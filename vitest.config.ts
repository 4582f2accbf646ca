import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PROJECTS, projectFiles } from './test/projects.js';

// Each test file lands in one project by what it uses (test/projects.ts): `npm test` runs them all, `npm run test:fast`
// the unit ones (--project unit), `test:api` and the others one project each. Every project extends these settings; maxWorkers holds for the run as a whole.
const files = projectFiles(fileURLToPath(new URL('.', import.meta.url)));

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Media tests run ffmpeg on 2 cores: too many files at once starve each other. Three ran a quiet clean clone in
    // 945-999 s instead of 1,290 s, but each of three runs met another test's timing margin (a late ad request, an
    // archive 1 s short): two, until those margins are known.
    maxWorkers: 2,
    pool: 'forks',
    projects: PROJECTS.map((name) => ({ extends: true as const, test: { name, include: files[name] } })),
  },
});
