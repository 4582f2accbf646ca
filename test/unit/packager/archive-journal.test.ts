// A channel taken over by another packager (or resumed after a restart) records its archive on a new ArchiveRecorder:
// the journal in archive-work gives it back the durations recorded before and the holes listed, so the hole is placed
// where it is in the archive and the archive's length counts what came before it (issue 32).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ArchiveRecorder } from '../../../packager/archive/archive-recorder.js';

describe('the archive journal across a takeover', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-journal-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const options = { dataDir, workflowId: 'wf-1', ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe' };
  const segment = (name: string) => {
    const file = path.join(dataDir, name);
    fs.writeFileSync(file, name);
    return file;
  };

  it('keeps the durations and gaps a previous recorder wrote; a line cut short by a crash is skipped', async () => {
    const first = new ArchiveRecorder(options);
    await first.record(segment('r1_0.ts'), 2, 'r1');
    await first.record(segment('r1_1.ts'), 1.5, 'r1');
    // the packager dies in the middle of a line
    fs.appendFileSync(path.join(dataDir, 'archive-work', 'wf-1', 'journal.jsonl'), '{"segment":"0000');

    const taken = new ArchiveRecorder(options);
    expect(taken.recordedSeconds).toBe(3.5);
    const gap = await taken.recordGap({ seconds: 7.2, from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T00:00:07.200Z', reason: 'its packager was gone' });
    expect(gap).toMatchObject({ atSeconds: 3.5, seconds: 7.2 });
    await taken.record(segment('r2_0.ts'), 2, 'r2');

    const again = new ArchiveRecorder(options);
    expect(again.recordedSeconds).toBe(5.5);
    expect(again.listedGaps).toEqual([gap]);
    const second = await again.recordGap({ seconds: 1, from: 'a', to: 'b', reason: 'r' });
    expect(second.atSeconds).toBe(5.5);
  });
});
