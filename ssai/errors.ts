// The SSAI error catalogue (STYLE.md rule 4): stable code, HTTP status, message. Codes are never reused once retired.
// Values, not thrown Errors: the hot path returns them and the HTTP handler answers with toErrorBody().

// Retired, never to be reused: ADINSERT_NOT_LIVE (issue 26: both configuration types serve live and VOD streams).
export const SSAI_ERRORS = {
  ORIGIN_TIMEOUT: { status: 504, message: 'The origin did not answer in time' },
  ORIGIN_NOT_HLS: { status: 502, message: 'The origin answered with something that is not an HLS playlist' },
  /** issue 33: a DASH playback path whose origin answers something that is not an MPD */
  ORIGIN_NOT_DASH: { status: 502, message: 'The origin answered with something that is not a DASH MPD' },
  /** issue 33: a valid MPD of a form not stitched yet (dynamic, several Periods, SegmentBase or SegmentList) */
  DASH_MPD_UNSUPPORTED: { status: 502, message: 'The origin MPD is of a form the proxy does not stitch yet' },
  ORIGIN_TOO_LARGE: { status: 502, message: 'The origin playlist is larger than the limit' },
  /** status is the origin's own (4xx passed through); 502 when the origin answers 5xx or the connection fails */
  ORIGIN_HTTP_ERROR: { status: 502, message: 'The origin answered with an error' },
  ADINSERT_NOT_FOUND: { status: 404, message: 'No ad-insertion configuration with this guid' },
  SESSION_NOT_FOUND: { status: 404, message: 'The playback session is unknown or expired' },
  VARIANT_NOT_FOUND: { status: 404, message: 'The session has no playlist with this number' },
  SEGMENT_NOT_FOUND: { status: 404, message: 'The session has no ad segment at this address' },
  BAD_PLAYBACK_PATH: { status: 400, message: 'The playback path is malformed' },
  BAD_DELIVERY_DIRECTIVE: { status: 400, message: 'An LL-HLS delivery directive (_HLS_msn, _HLS_part) is malformed' },
  /** issue 30: `ads.mode` / `insertionMode` names no insertion mode */
  BAD_INSERTION_MODE: { status: 400, message: 'The insertion mode must be stitched or guided' },
  /** issue 30: the configuration's insertion_mode_override is false and the session asked for the other mode */
  INSERTION_MODE_FORBIDDEN: { status: 403, message: 'This ad-insertion configuration does not let a session choose its insertion mode' },
  /** issue 30: an asset list of a break the stream does not (or no longer) list */
  BREAK_NOT_FOUND: { status: 404, message: 'The stream lists no break with this id' },
  /** issue 31: `ads.debug` (or the session body's debug) is not 1, true, 0 or false */
  BAD_DEBUG_FLAG: { status: 400, message: 'ads.debug (or the session body\'s debug) must be 1, true, 0 or false' },
  /** issue 31: no debug log of this session under a configuration of the caller's organization (or it expired) */
  DEBUG_LOG_NOT_FOUND: { status: 404, message: 'No debug log of this session under a configuration of your organization' },
  SESSION_BODY_TOO_LARGE: { status: 413, message: 'The session request body is larger than 64 KiB' },
  /** PostgreSQL is down and the configuration was never read by this process (issue 27); known ones are served from cache */
  DATABASE_UNAVAILABLE: { status: 503, message: 'The database is unavailable and this process has not seen this configuration yet' },
  /** Redis is down and neither this session nor its playlists are known to this process (issue 27) */
  SESSION_STORE_UNAVAILABLE: { status: 503, message: 'The session store is unavailable and this process does not know the session' },
} as const satisfies Record<string, { status: number; message: string }>;

export type SsaiErrorCode = keyof typeof SSAI_ERRORS;
export type SsaiError = { readonly kind: 'ssai-error'; readonly code: SsaiErrorCode; readonly status: number; readonly message: string };

/** Builds a catalogue error; `status` overrides only for ORIGIN_HTTP_ERROR (origin 4xx pass-through). */
export function ssaiError(code: SsaiErrorCode, message?: string, status?: number): SsaiError {
  const entry = SSAI_ERRORS[code];
  const s = code === 'ORIGIN_HTTP_ERROR' && status !== undefined && status >= 400 && status < 500 ? status : entry.status;
  return { kind: 'ssai-error', code, status: s, message: message ?? entry.message };
}

export function isSsaiError(value: unknown): value is SsaiError {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'ssai-error' &&
    typeof (value as { code?: unknown }).code === 'string' && (value as { code: string }).code in SSAI_ERRORS;
}

/** JSON body of DESIGN.md's error convention. */
export function toErrorBody(err: SsaiError): { status: false; code: SsaiErrorCode; description: string } {
  return { status: false, code: err.code, description: err.message };
}
