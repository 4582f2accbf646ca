// The ad server URL's variables (issue 31 point 6): ours filled or sent empty, the ad server's macros left alone.
import { describe, expect, it } from 'vitest';
import { availRandom, fillAdServerUrl, unknownVariables } from '../../../ssai/decide/vast-decision.js';

const req = { sessionId: 's 1', availIndex: 2, availDuration: 29.6, availRandom: 42, userAgent: 'UA/1 (x)', clientIp: '::1', playerParams: { genre: 'a&b' } };

describe('ad server URL variables', () => {
  it('fills the session, avail and player variables URL-encoded', () => {
    const url = fillAdServerUrl('http://ads/v?s=[session.id]&ua=[session.user_agent]&ip=[session.client_ip]&n=[avail.index]&d=[avail.duration]&r=[avail.random]&g=[player_params.genre]&h=[player_params.none]', req);
    expect(url).toBe('http://ads/v?s=s%201&ua=UA%2F1%20(x)&ip=%3A%3A1&n=2&d=30&r=42&g=a%26b&h=');
  });

  it('sends an unknown name of our namespaces empty and names it, and leaves every other bracketed name as it is', () => {
    const template = 'http://ads/v?a=[session.nope]&b=[avail.nope]&c=[scte.nope]&d=[scte.event_id]&e=[CACHEBUSTING]&f=[their_macro]&g=[ERRORCODE]';
    expect(fillAdServerUrl(template, req)).toBe('http://ads/v?a=&b=&c=&d=&e=[CACHEBUSTING]&f=[their_macro]&g=[ERRORCODE]');
    // a field the cue happens not to have (no cue here) is known: empty, not reported
    expect(unknownVariables(template)).toEqual(['session.nope', 'avail.nope', 'scte.nope']);
  });

  it('draws avail.random from the break: the same for every request of a break, another for the next', () => {
    const a = availRandom('g', { id: 'scte-1', startPdtMs: 1000 });
    expect(availRandom('g', { id: 'break-1000', startPdtMs: 1000 })).toBe(a);
    expect(availRandom('g', { id: 'scte-2', startPdtMs: 61_000 })).not.toBe(a);
    expect(availRandom('h', { id: 'scte-1', startPdtMs: 1000 })).not.toBe(a);
    expect(availRandom('g', { id: 'vmap-pre' })).toBeLessThan(1e10);
  });
});
