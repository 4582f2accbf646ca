import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { TUS_UPLOAD_LIMIT } from '../../../src/uploads/tus.mount.js';

describe('tus discovery', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
  });
  afterAll(async () => engine?.close());

  it.each(['/broker/upload', '/broker/private/upload'])('answers OPTIONS %s from the tus server with its capabilities and CORS', async (path) => {
    const response = await fetch(`${engine.url}${path}`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('tus-version')).toBe('1.0.0');
    expect(response.headers.get('tus-extension')?.split(',')).toEqual(expect.arrayContaining(['creation', 'termination']));
    expect(response.headers.get('tus-max-size')).toBe(String(TUS_UPLOAD_LIMIT));
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toMatch(/PATCH/);
  });

  it('lets a browser on another origin preflight an upload with an API key', async () => {
    const response = await fetch(`${engine.url}/broker/private/upload`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key, tus-resumable, upload-length, upload-metadata' },
    });
    expect(response.status).toBe(204);
    const allowed = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['x-api-key', 'tus-resumable', 'upload-length', 'upload-metadata']));
    expect(response.headers.get('access-control-allow-origin')).toMatch(/^(\*|https:\/\/app\.example\.test)$/);
  });

  it('still answers the preflight of a JSON route itself, without tus headers', async () => {
    const response = await fetch(`${engine.url}/auth/authorize`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('tus-version')).toBeNull();
    expect(response.headers.get('access-control-allow-headers')).toMatch(/X-Api-Key/);
  });

  it('still asks credentials for an upload itself', async () => {
    const response = await fetch(`${engine.url}/broker/private/upload`, { method: 'POST', headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': '10' } });
    expect(response.status).toBe(401);
  });
});
