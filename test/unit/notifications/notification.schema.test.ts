import { describe, expect, it } from 'vitest';
import { endpointProblem } from '../../../src/notifications/notification.schema.js';

describe('endpointProblem', () => {
  it('takes https URLs and email addresses', () => {
    expect(endpointProblem('https', 'https://hooks.example.com/engine?x=1', false)).toBeUndefined();
    expect(endpointProblem('email', 'ops@example.com', false)).toBeUndefined();
  });

  it('refuses http, other schemes, credentials in the URL and non-addresses', () => {
    expect(endpointProblem('https', 'http://hooks.example.com/engine', true)).toBe('must be an https:// URL');
    expect(endpointProblem('https', 'ftp://hooks.example.com/', false)).toBe('must be an https:// URL');
    expect(endpointProblem('https', 'not a url', false)).toBe('must be an https:// URL');
    expect(endpointProblem('https', 'https://user:pw@hooks.example.com/', false)).toBe('must not carry credentials');
    expect(endpointProblem('email', 'https://hooks.example.com/', false)).toBe('must be an email address');
  });

  it('allows http on loopback addresses only when configured', () => {
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost/hook', 'http://[::1]:80/', 'http://127.8.0.1/']) {
      expect(endpointProblem('https', url, true)).toBeUndefined();
      expect(endpointProblem('https', url, false)).toMatch(/NOTIFY_HTTP_LOOPBACK/);
    }
    expect(endpointProblem('https', 'http://127.0.0.1.example.com/', true)).toBe('must be an https:// URL');
  });
});
