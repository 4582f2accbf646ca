// Public surface of the VOD encoder: the API, queue and proxy use only these exports.
export { configureTools, type EncodeProgress } from './ffmpeg-runner.js';
export { VOD_ERRORS, VodError, isVodError, type VodErrorCode, type VodFailure, type VodResult } from './errors.js';
export { probeMedia, type MediaInfo } from './probe.js';
export { chooseLadder, STANDARD_RUNGS, type Ladder, type Rung } from './ladder.js';
export { encodeVod, CMAF_DIR, HLS_MASTER_NAME, DASH_MANIFEST_NAME, type EncodeHandle, type EncodeOptions, type EncodeOutputs } from './encode.js';
export { buildRecords, derivedGuid, type RecordsInput } from './records.js';
export type * from './records.types.js';
export { generateCaptions, attachCaptions, addHlsSubtitles, addDashSubtitles, type Cue, type SubtitleTrack } from './captions.js';
export {
  prepareCreative, prepareSlate, creativeKey, type PrepareOptions, type PreparedCreative, type PreparedRendition,
  type PreparedAudio, type PreparedSegment, type TargetLadder,
} from './prepare-creative.js';
