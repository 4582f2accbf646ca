// The JSON error answer every mount sends (the control plane's app, the media and live mounts): one shape for all.
import type { Response } from 'express';
import { errorBody, type EngineError } from '../core/errors.js';

export function sendError(res: Response, error: EngineError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (error.details?.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.details.retryAfterSeconds));
  res.status(error.status).json(errorBody(error));
}
