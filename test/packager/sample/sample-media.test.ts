// Issue 26 §4: a fresh install runs the catalog's MP4 loop blueprint with no clip made by hand. The engine makes
// DATA_DIR/test-media/sample.mp4 at start; a channel started before it is there waits for it and runs.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../kernel/core/logger.js';
import { SAMPLE_MEDIA_PATH, SampleMedia } from '../../../packager/sample-media.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { createWorkflow, startAndSettle, stopAndSettle, tinyBlueprint, until } from '../../e2e/live/live-helpers.js';

interface Probe { streams: Array<{ codec_type: string; codec_name: string; width?: number; height?: number }>; format: { duration: string } }

function probe(file: string): Promise<Probe> {
  return new Promise((resolve, reject) => {
    execFile('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file], (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as Probe)));
  });
}

describe('the sample clip of the MP4 loop blueprint', () => {
  const engines: TestEngine[] = [];
  afterAll(async () => {
    for (const engine of engines) await engine.close();
  });

  it('is made at first start, and a channel started from the catalog blueprint before it is there waits and runs', { timeout: 180_000 }, async () => {
    const engine = await startTestEngine();
    engines.push(engine);
    const auth = { Authorization: (await engine.login()).IdToken };
    // started at once, most likely before the clip is there: the input's path is the catalog's own
    const blueprint = tinyBlueprint('mp4-loop-test');
    expect(blueprint.components.encoder.input.sources).toEqual([{ url: SAMPLE_MEDIA_PATH }]);
    const id = await createWorkflow(engine, auth, blueprint, 'Out of the box');
    const detail = await startAndSettle(engine, auth, id);
    expect(detail.channelStatus, detail.statusReason).toBe('RUNNING');
    expect(detail.inputs[0]).toMatchObject({ type: 'MP4', url: `file:${SAMPLE_MEDIA_PATH}` });

    const file = path.join(engine.dataDir, SAMPLE_MEDIA_PATH);
    await until('the sample clip', async () => (fs.existsSync(file) ? true : undefined), 60_000);
    const media = await probe(file);
    const video = media.streams.find((s) => s.codec_type === 'video');
    const audio = media.streams.find((s) => s.codec_type === 'audio');
    expect(video).toMatchObject({ codec_name: 'h264', width: 640, height: 360 });
    expect(audio).toMatchObject({ codec_name: 'aac' });
    expect(Number(media.format.duration)).toBeGreaterThanOrEqual(10);
    expect(Number(media.format.duration)).toBeLessThanOrEqual(20);
    // nothing half-made is left beside it
    expect(fs.readdirSync(path.dirname(file))).toEqual(['sample.mp4']);
    expect((await stopAndSettle(engine, auth, id)).channelStatus).toBe('DONE');
  });

  it('keeps a clip the user put there', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-sample-'));
    const file = path.join(dataDir, SAMPLE_MEDIA_PATH);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'the user own clip');
    const engine = await startTestEngine({ dataDir });
    engines.push(engine);
    // a waiting channel is released at once: the clip is there
    await engine.ctx.services.sampleMedia!.waitFor(file, 1);
    expect(fs.readFileSync(file, 'utf8')).toBe('the user own clip');
  });

  it('tells a waiting channel why the clip could not be made', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-sample-'));
    const sample = new SampleMedia({ dataDir, ffmpegPath: path.join(dataDir, 'no-ffmpeg-here'), logger: createLogger('silent') });
    sample.start();
    await expect(sample.waitFor(path.join(dataDir, SAMPLE_MEDIA_PATH), 60_000)).rejects.toThrow(/sample clip test-media\/sample\.mp4 could not be made/);
    // other files are not waited for
    await sample.waitFor(path.join(dataDir, 'test-media/other.mp4'), 1);
    expect(fs.existsSync(path.join(dataDir, SAMPLE_MEDIA_PATH))).toBe(false);
  });
});
