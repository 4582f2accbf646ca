// Issue 32 item 3: kill -9 of the worker encoding a VOD (scenario in scenarios/kill-worker.ts). The other worker leases
// the job again and completes it once; one set of records, one output directory, nothing orphaned; the VOD plays.
import { describe, expect, it } from 'vitest';
import { privateStoresMissing } from './private-stores.js';
import { killWorkerScenario } from './scenarios/kill-worker.js';

const CLIP_SECONDS = 12;
const missing = privateStoresMissing();
if (missing) process.stderr.write(`test/faults: skipped: ${missing}\n`);

describe.skipIf(missing !== undefined)('kill -9 of a worker mid-encode (private PostgreSQL and Redis)', () => {
  it('has the other worker lease the job again and complete it once, with one set of records and files, and the VOD plays', async () => {
    const figures = await killWorkerScenario({ clipSeconds: CLIP_SECONDS, log: (line) => process.stderr.write(`kill-worker: ${line}\n`) });
    const e = figures.evidence;
    process.stderr.write(`kill-worker: ${JSON.stringify(figures.details)}\n`);
    expect(e.deadSurvivors).toEqual([]);
    expect(e.info.status).toBe('complete');
    expect(e.info.statusReason).toBeNull();
    // one pg-boss job, completed; run twice (the killed worker's run and the survivor's), finished once
    expect(e.jobs).toHaveLength(1);
    expect(e.jobs[0]!.state).toBe('completed');
    expect(e.startedOn[e.survivor]).toBeGreaterThanOrEqual(1);
    expect(e.completedOn).toEqual({ [e.killed]: 0, [e.survivor]: 1 });
    // one output directory, the record's: the killed run's partial directory is gone, every URL points into it
    expect(e.outputDir).not.toBeNull();
    expect(e.versionDirs).toEqual([e.outputDir!.split('/').pop()]);
    expect(e.foreignUrls).toEqual([]);
    expect(e.info.mp4Urls.length).toBeGreaterThan(0);
    expect(e.uploads).toHaveLength(2);
    expect(e.uploads).toContain(e.sourceFile);
    // the killed worker's ffmpeg died with it rather than encoding on for nobody
    expect(e.orphanFfmpeg).toEqual([]);
    // the VOD plays: ffprobe reads the whole clip through its HLS master
    expect(e.probed.videoStreams).toBeGreaterThan(0);
    expect(Math.abs(e.probed.durationSec - CLIP_SECONDS)).toBeLessThan(1);
    expect(figures.requestsFailed).toBe(0);
    expect(figures.recordsLost).toBe(0);
  }, 600_000);
});
