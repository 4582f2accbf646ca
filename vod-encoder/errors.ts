// Error catalogue of the VOD encoder: stable codes, branch on `code` (STYLE 3.4), never instanceof.

export const VOD_ERRORS = {
  VOD_NOT_MEDIA: { status: 400, message: 'The file is not a playable media file' },
  VOD_NO_VIDEO: { status: 400, message: 'The file has no video stream' },
  VOD_PROBE_FAILED: { status: 500, message: 'ffprobe could not run' },
  VOD_ENCODE_FAILED: { status: 500, message: 'ffmpeg failed while encoding' },
  VOD_ENCODE_CANCELED: { status: 409, message: 'The encode was canceled' },
  VOD_OUTPUT_INVALID: { status: 500, message: 'An encoded output could not be read back' },
  VOD_CAPTIONS_FAILED: { status: 500, message: 'Speech recognition failed' },
  VOD_CREATIVE_FETCH_FAILED: { status: 502, message: 'The creative media file could not be downloaded' },
  VOD_CREATIVE_TRANSCODE_FAILED: { status: 500, message: 'The creative could not be transcoded' },
} as const;

export type VodErrorCode = keyof typeof VOD_ERRORS;

/** A failure as data: returned in results, carried by VodError when thrown. */
export interface VodFailure {
  code: VodErrorCode;
  message: string;
  /** Why, for humans: ffprobe/ffmpeg stderr tail or the underlying error message. */
  reason: string;
}

export type VodResult<T> = { ok: true; value: T } | { ok: false; error: VodFailure };

export class VodError extends Error {
  readonly code: VodErrorCode;
  readonly reason: string;
  constructor(code: VodErrorCode, reason: string) {
    super(`${VOD_ERRORS[code].message}: ${reason}`);
    this.name = 'VodError';
    this.code = code;
    this.reason = reason;
  }
  toFailure(): VodFailure {
    return { code: this.code, message: VOD_ERRORS[this.code].message, reason: this.reason };
  }
}

export function failure(code: VodErrorCode, reason: string): { ok: false; error: VodFailure } {
  return { ok: false, error: { code, message: VOD_ERRORS[code].message, reason } };
}

export function isVodError(e: unknown): e is VodError {
  return typeof e === 'object' && e !== null && 'code' in e && typeof (e as { code: unknown }).code === 'string'
    && (e as { code: string }).code in VOD_ERRORS;
}

/** Last lines of a tool's stderr: enough to tell why, short enough for a status reason. */
export function stderrTail(stderr: string, lines = 8): string {
  return stderr.split(/\r?\n|\r/).map((l) => l.trim()).filter(Boolean).slice(-lines).join('\n');
}

// An absolute POSIX path of two or more parts, not inside a URL (no word character, ':' or '/' before its slash).
const ABSOLUTE_PATH = /(?<![\w.:/])\/(?:[\w.@+~-]+\/)+[\w.@+~-]*/g;

/** Tool output made fit for public answers: every absolute server path replaced by its file name. */
export function withoutServerPaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, (found) => found.split('/').filter(Boolean).pop() ?? '');
}

/**
 * The first line of ffmpeg's or ffprobe's error output that says why, without the "[demuxer @ 0x…]" prefix, the
 * input's path or any other server path: "moov atom not found", "Invalid data found when processing input".
 */
export function firstErrorLine(stderr: string, file: string): string {
  for (const raw of stderr.split(/\r?\n|\r/)) {
    const line = withoutServerPaths(raw.split(file).join('').replace(/^\s*\[[^\]]*@\s*0x[0-9a-f]+\]\s*/i, ''))
      .replace(/^[\s:]+/, '').trim();
    if (line && !/^Command failed/i.test(line)) return line;
  }
  return '';
}
