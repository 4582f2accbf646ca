// Issue 32, item 2: kill -9 of the packager running a channel, at a small scale (the bench runs the same scenario with
// more players). Everything is read from outside: channel_owners, the playlists players read through the balancer,
// the channel's alarms, the archive's record beside its file.
import { describe, expect, it } from 'vitest';
import { killPackagerScenario } from './scenarios/kill-packager.js';
import { privateStoresMissing } from './private-stores.js';

const missing = privateStoresMissing();
if (missing) process.stderr.write(`test/faults: skipped: ${missing}\n`);

describe.skipIf(missing !== undefined)('kill -9 of the packager running a channel', () => {
  it('the other packager takes it over: one discontinuity, growing media sequence numbers, the outage alarmed with its seconds, the hole in the archive', async () => {
    const figures = await killPackagerScenario({ viewers: 2, log: (line) => process.stdout.write(`${line}\n`) });
    const e = figures.evidence;
    process.stdout.write(`packager takeover: ${JSON.stringify({ ...figures, evidence: undefined })}\n`);

    expect(e.ownerAfter).not.toBe(e.ownerBefore);
    expect(e.ownerAfter).not.toContain(`-${e.killedPid}-`);
    // the playlist goes on: exactly one discontinuity where it resumed, numbers growing, nothing once listed changed
    expect(e.discontinuitiesAfterKill).toBe(1);
    expect(e.lastSequenceAfter).toBeGreaterThan(e.lastSequenceBefore + 2);
    expect(e.changedSegments).toEqual([]);
    expect(e.sequenceRegressions).toBe(0);
    expect(figures.recordsLost).toBe(0);
    // the survivor serves what is on the shared volume meanwhile: a player that retries once (a request in flight to
    // the killed process) never sees an error
    expect(figures.requestsFailed).toBe(0);
    // playable again, from the multivariant playlist down
    expect(e.decodeErrors).toBe('');
    expect(e.decodedSec).toBeGreaterThanOrEqual(1.5);

    // one alarm spanning the hole, cleared with the seconds it lasted
    expect(e.outageAlarms).toHaveLength(1);
    const alarm = e.outageAlarms[0]!;
    expect(alarm).toMatchObject({ code: 'CHANNEL_OUTAGE', active: false, message: expect.stringMatching(/^off air for [\d.]+ s \(.+ to .+\): its packager .+ was gone; packager .+ took the channel over$/) });
    const reported = Number(/off air for ([\d.]+) s/.exec(alarm.message)![1]);
    expect(Math.abs(reported - (Date.parse(alarm.clearedDateTime!) - Date.parse(alarm.raisedDateTime)) / 1000)).toBeLessThanOrEqual(0.1);
    // the hole began before the kill was noticed and lasted at least until the takeover ran
    expect(reported).toBeGreaterThan(0);
    expect(reported).toBeLessThanOrEqual(figures.recoverSeconds! + e.targetDuration + 2);

    // the archive lists the hole (its file joins the runs on either side), with the same seconds
    expect(e.archiveFile).toBe(true);
    expect(e.archiveRecord?.gaps).toHaveLength(1);
    const gap = e.archiveRecord!.gaps[0]!;
    expect(gap.seconds).toBe(reported);
    expect(gap.atSeconds).toBeGreaterThan(0);
    expect(gap.atSeconds).toBeLessThan(e.archiveRecord!.seconds);
    expect(gap.reason).toMatch(/was gone/);
  }, 240_000);
});
