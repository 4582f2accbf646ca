import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Media tests run ffmpeg on 2 cores: too many files at once starve each other.
    maxWorkers: 2,
    pool: 'forks',
  },
});
