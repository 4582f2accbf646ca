// One error catalogue for the control plane (STYLE.md rule 4): stable code, HTTP status, message.
// Consumers branch on `code` through isEngineError(), never instanceof. Retired codes are never reused.

export const ERROR_CATALOGUE = {
  VALIDATION_FAILED: { status: 400, message: 'The request is invalid' },
  MALFORMED_JSON: { status: 400, message: 'The request body is not valid JSON' },
  RANGE_TOO_LONG: { status: 400, message: 'The requested range is too long' },
  UNKNOWN_REFERENCE: { status: 400, message: 'The request names an item that does not exist' },
  SOURCE_NOT_PLAYABLE: { status: 400, message: 'A source is not encoded and playable yet' },
  AD_OUTSIDE_SOURCE: { status: 400, message: 'An ad position lies outside its source' },
  LISTINGS_NOT_CONTIGUOUS: { status: 400, message: 'The listings do not cover the range back to back' },
  ADINSERT_MISMATCH: { status: 400, message: 'The ad-insertion configuration cannot serve this stream' },
  UNAUTHENTICATED: { status: 401, message: 'Credentials are missing' },
  INVALID_CREDENTIALS: { status: 401, message: 'Email or password is wrong' },
  INVALID_TOKEN: { status: 401, message: 'The token is invalid or expired' },
  INVALID_API_KEY: { status: 401, message: 'The API key is unknown, inactive or deleted' },
  WRONG_AUTH_SCHEME: { status: 401, message: 'This path takes another authentication scheme' },
  FORBIDDEN: { status: 403, message: 'Your role does not allow this' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No such route' },
  BLUEPRINT_NOT_FOUND: { status: 404, message: 'The blueprint id names no blueprint of the catalog' },
  CONFLICT: { status: 409, message: 'The request conflicts with the current state' },
  ALREADY_EXISTS: { status: 409, message: 'The item already exists' },
  WORKFLOW_LOCKED: { status: 409, message: 'The workflow is locked while its channel changes state' },
  WORKFLOW_START_FAILED: { status: 409, message: 'The workflow failed to start earlier and cannot be started again' },
  CHANNEL_NOT_RUNNING: { status: 409, message: 'The channel is not running' },
  CHANNEL_ALREADY_STARTED: { status: 409, message: 'A channel was already started from this workflow and has not finished' },
  CHANNEL_NOT_STARTED: { status: 409, message: 'No channel was started from this workflow' },
  INPUT_IN_USE: { status: 409, message: 'The input is in use' },
  DEVICE_HAS_INPUT: { status: 409, message: 'The device already has a managed input' },
  INPUT_NOT_EDITABLE: { status: 409, message: 'The managed input cannot be edited in its current status' },
  INGEST_PORTS_EXHAUSTED: { status: 409, message: 'No ingest port is free for a new input' },
  META_GROUP_IN_USE: { status: 409, message: 'The meta group is in use' },
  EMAIL_NOT_CONFIGURED: { status: 409, message: 'Email notifications need SMTP_URL on the engine' },
  CONFIRMATION_TOKEN_INVALID: { status: 404, message: 'The confirmation link is unknown or was already used' },
  PLAYLIST_IN_USE: { status: 409, message: 'The playlist is named by listings' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'The requested range is beyond the end of the file' },
  UNSUPPORTED_MEDIA: { status: 415, message: 'The content type is not supported' },
  RATE_LIMITED: { status: 429, message: 'Too many attempts; retry later' },
  UPSTREAM_FAILED: { status: 502, message: 'An upstream server failed' },
  RUNTIME_UNAVAILABLE: { status: 503, message: 'The runtime for this operation is not available' },
  CONSOLE_NOT_BUILT: { status: 503, message: 'The web console is not built on this server' },
  DATABASE_UNAVAILABLE: { status: 503, message: 'The database is unavailable; retry after the Retry-After header' },
  INSUFFICIENT_STORAGE: { status: 507, message: 'The disk of the data directory is full' },
  INTERNAL: { status: 500, message: 'Internal error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface FieldProblem {
  field: string;
  message: string;
}

export class EngineError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    description?: string,
    readonly details?: { fields?: FieldProblem[]; retryAfterSeconds?: number },
  ) {
    super(description ?? ERROR_CATALOGUE[code].message);
    this.name = 'EngineError';
    this.status = ERROR_CATALOGUE[code].status;
  }
}

export function engineError(code: ErrorCode, description?: string, details?: EngineError['details']): EngineError {
  return new EngineError(code, description, details);
}

export function isEngineError(value: unknown): value is EngineError {
  return (
    typeof value === 'object' &&
    value !== null &&
    'code' in value &&
    typeof (value as { code: unknown }).code === 'string' &&
    (value as { code: string }).code in ERROR_CATALOGUE &&
    'status' in value
  );
}

export interface ErrorBody {
  status: false;
  code: string;
  description: string;
  fields?: FieldProblem[];
}

export function errorBody(error: EngineError): ErrorBody {
  const body: ErrorBody = { status: false, code: error.code, description: error.message };
  if (error.details?.fields) body.fields = error.details.fields;
  return body;
}

/** Shortcut for the 404 of an unknown or other organization's id. */
export function notFound(what: string, id: string): EngineError {
  return engineError('NOT_FOUND', `${what} ${id} does not exist`);
}
