// Issue 32 item 1: kill -9 of one ssai process while viewers play through a break, half on each (scenario in
// scenarios/kill-ssai.ts; the bench runs it with 1,000 viewers). The survivor's viewers see no error; the killed
// node's viewers, re-pointed at the survivor, keep their session, their ads and their numbering; no beacon fires twice.
import { describe, expect, it } from 'vitest';
import { privateStoresMissing } from './private-stores.js';
import { killSsaiScenario } from './scenarios/kill-ssai.js';

const VIEWERS = 100;
// Back in npm test in stop 39: the post-kill freeze of stop 38 (2 of 4 runs at load 10 to 22: every viewer's window
// stopped advancing) did not come back in 3 runs (quiet, load 4, load 9). Retried once; its timeout message prints
// the viewers' last playlists if it does (docs/faults.md).
const missing = privateStoresMissing();
if (missing) process.stderr.write(`test/faults/ssai-kill: skipped: ${missing}\n`);

describe.skipIf(missing !== undefined)('kill -9 of an ssai process mid-break (private PostgreSQL and Redis)', () => {
  it('keeps every viewer playing its own session, ads and numbering, and fires no beacon twice', { retry: 1, timeout: 600_000 }, async () => {
    const figures = await killSsaiScenario({ viewers: VIEWERS, log: (line) => process.stderr.write(`kill-ssai: ${line}\n`) });
    const e = figures.evidence;
    process.stderr.write(`kill-ssai: ${JSON.stringify(figures.details)} requests ${figures.requestsFailed}/${figures.requestsTotal} failed\n`);
    expect(e.deadSurvivors).toEqual([]);
    expect(e.viewers).toBe(VIEWERS);
    // the survivor's own viewers: not one error
    expect(e.survivorViewerFailures).toBe(0);
    // the killed node's viewers: refused (their failed requests), then answered by the survivor, every one of them
    expect(e.neverAnsweredAgain).toBe(0);
    expect(figures.recoverSeconds).not.toBeNull();
    expect(e.adSegmentsAfterRepoint).toBeGreaterThan(0);
    // the same session, the same ads: no listed segment renamed, no numbering going back
    expect(e.sessionChanged).toBe(0);
    expect(e.renamed).toEqual([]);
    expect(e.backwards).toBe(0);
    // no beacon twice; the ones lost can only be those the killed process had marked and not yet sent
    expect(e.beaconsExpected).toBeGreaterThan(0);
    expect(e.beaconsDoubled).toBe(0);
    expect(e.beaconsLost - e.beaconsLostOnVictim).toBe(0);
  });
});
