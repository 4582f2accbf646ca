import { describe, expect, it } from 'vitest';
import { isSsaiError, SSAI_ERRORS, ssaiError, toErrorBody } from '../../../ssai/errors.js';

describe('ssai error catalogue', () => {
  it('gives the issue-5 statuses to origin and lookup failures', () => {
    expect(Object.fromEntries(Object.entries(SSAI_ERRORS).map(([k, v]) => [k, v.status]))).toMatchObject({
      ORIGIN_TIMEOUT: 504, ORIGIN_NOT_HLS: 502, ORIGIN_TOO_LARGE: 502, ORIGIN_HTTP_ERROR: 502,
      ADINSERT_NOT_FOUND: 404, SESSION_NOT_FOUND: 404,
    });
  });

  it('passes an origin 4xx status through but turns an origin 5xx into 502', () => {
    expect(ssaiError('ORIGIN_HTTP_ERROR', undefined, 403).status).toBe(403);
    expect(ssaiError('ORIGIN_HTTP_ERROR', undefined, 503).status).toBe(502);
    expect(ssaiError('ORIGIN_TIMEOUT', undefined, 404).status).toBe(504);
  });

  it('recognises its errors by code, not by class, and renders the JSON error body', () => {
    const err = ssaiError('SESSION_NOT_FOUND');
    expect(isSsaiError(err)).toBe(true);
    expect(isSsaiError({ kind: 'ssai-error', code: 'NOPE' })).toBe(false);
    expect(isSsaiError(new Error('x'))).toBe(false);
    expect(toErrorBody(err)).toEqual({ status: false, code: 'SESSION_NOT_FOUND', description: SSAI_ERRORS.SESSION_NOT_FOUND.message });
  });

  it('has a message for every code', () => {
    for (const [code, e] of Object.entries(SSAI_ERRORS)) expect([code, e.message.length > 10]).toEqual([code, true]);
  });
});
