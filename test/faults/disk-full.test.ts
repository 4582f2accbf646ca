// Issue 32, item 5: the disk of DATA_DIR full (a small tmpfs volume), with a channel running and an upload in
// progress; then the space freed. Read from outside: HTTP answers, the VOD's record, the channel's alarms and status,
// the files on the volume, the records in the database.
import { describe, expect, it } from 'vitest';
import { diskFullScenario, smallVolumeMissing } from './scenarios/disk-full.js';
import { privateStoresMissing } from './private-stores.js';

const missing = privateStoresMissing() ?? smallVolumeMissing();
if (missing) process.stderr.write(`test/faults/disk-full: skipped: ${missing}\n`);

const DISK_FULL = /the disk of the data directory is full \(ENOSPC\); free space, then try again/;

describe.skipIf(missing !== undefined)('the disk of DATA_DIR full', () => {
  it('uploads fail with 507 and a statusReason, the running channel alarms and recovers, the archive fails clearly, nothing half-written is complete; all works again once freed', async () => {
    const figures = await diskFullScenario({ viewers: 1, log: (line) => process.stdout.write(`${line}\n`) });
    const e = figures.evidence;
    process.stdout.write(`disk full: ${JSON.stringify({ ...figures, evidence: undefined })}\n`);

    // an upload cut off mid-body, one started on the full disk, a tus upload created on it: 507, a code and a description
    for (const answer of [e.uploadInProgress, e.uploadWhileFull, e.tusWhileFull]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(507);
      expect(answer.body).toMatchObject({ code: 'INSUFFICIENT_STORAGE', description: expect.stringMatching(DISK_FULL) });
    }
    expect(e.vodAfterFailure).toMatchObject({ status: 'error', statusReason: expect.stringMatching(/^the upload could not be written: /) });

    // the running channel says why it cannot write (not an input loss), and goes on by itself once there is space
    expect(e.diskFullAlarm?.message).toMatch(/the data directory is full/);
    expect(e.alarmClearedAfterFree).toBe(true);
    expect(e.playlistGrewAfterFree).toBe(true);

    // the archive cannot be merged on the full disk: the stop fails and says why; no file looks complete
    expect(e.stopOnFullDisk).toMatchObject({ channelStatus: 'STOP_FAILED', statusReason: expect.stringMatching(/^the archive could not be written: .*full/) });
    expect(e.halfWritten).toEqual([]);
    expect(e.completeButTruncated).toEqual([]);
    expect(figures.recordsLost).toBe(0);

    // space back: the same VOD uploads and encodes, the channel stops
    expect(e.uploadAfterFree).toBe(200);
    expect(e.vodAfterFree, JSON.stringify(e.vodAfterFree)).toMatchObject({ status: 'complete', statusReason: null });
    expect(e.stopAfterFree.channelStatus).toBe('DONE');
    expect(e.engineAlive).toBe(true);
  }, 300_000);
});
