// The ABR ladder: fixed rungs by height, never upscaled, even dimensions, source aspect kept.

export interface Rung {
  width: number;
  height: number;
  /** Target video bitrate in bit/s. */
  videoBitrate: number;
  /** VBV limits in bit/s: maxrate 1.07x target, buffer 2x, so segments stay near the advertised bandwidth. */
  maxrate: number;
  bufsize: number;
}

export interface Ladder {
  rungs: Rung[];
  audioBitrate: number;
  audioSampleRate: number;
  audioChannels: number;
  frameRate: number;
  segmentDurationSec: number;
}

export const STANDARD_RUNGS: ReadonlyArray<{ height: number; videoBitrate: number }> = [
  { height: 1080, videoBitrate: 5_000_000 },
  { height: 720, videoBitrate: 3_000_000 },
  { height: 480, videoBitrate: 1_400_000 },
  { height: 360, videoBitrate: 800_000 },
];

export const AUDIO_BITRATE = 128_000;
export const AUDIO_SAMPLE_RATE = 48_000;
export const SEGMENT_DURATION_SEC = 4;

export function even(n: number): number {
  return Math.max(2, 2 * Math.round(n / 2));
}

function rung(width: number, height: number, videoBitrate: number): Rung {
  return { width, height, videoBitrate, maxrate: Math.round(videoBitrate * 1.07), bufsize: videoBitrate * 2 };
}

export interface LadderSource {
  width: number;
  height: number;
  frameRate: number;
}

/** Rungs at or below the source height; a source under 360p gets one rung at its own (even) height. */
export function chooseLadder(src: LadderSource, segmentDurationSec = SEGMENT_DURATION_SEC): Ladder {
  const aspect = src.width / src.height;
  const fitting = STANDARD_RUNGS.filter((r) => r.height <= src.height);
  const rungs = fitting.length > 0
    ? fitting.map((r) => rung(even(r.height * aspect), r.height, r.videoBitrate))
    // Below 360p: scale 360p's bitrate by pixel count, with a floor so tiny sources stay watchable.
    : [rung(even(src.width), even(src.height),
      Math.max(200_000, Math.round((800_000 * src.width * src.height) / (640 * 360) / 1000) * 1000))];
  // Missing rates fall back to 30; above 60 (or bogus 90000 timebases) is capped at 60 by the encoder's fps filter.
  const fr = src.frameRate > 0 ? Math.min(src.frameRate, 60) : 30;
  return {
    rungs,
    audioBitrate: AUDIO_BITRATE,
    audioSampleRate: AUDIO_SAMPLE_RATE,
    audioChannels: 2,
    frameRate: fr,
    segmentDurationSec,
  };
}
