// The cheap inline VAST path gives the same linear ads as the full VAST client over every IAB sample it accepts.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VastDecisionClient } from '../../../ssai/decide/vast-decision.js';
import { inlineLinearAds, parseElements } from '../../../ssai/parse/vast-inline.js';
import { VECTORS_DIR, vectorPath } from '../../helpers/vectors.js';

const samples = VECTORS_DIR
  ? readdirSync(vectorPath('vast-iab')).flatMap((v) => readdirSync(vectorPath('vast-iab', v)).map((f) => [`${v}/${f}`, readFileSync(vectorPath('vast-iab', v, f), 'utf8')] as const))
  : [];
const inline = (ad: string, seq: number, extra = '') => `<Ad id="ad-${ad}" sequence="${seq}"><InLine><AdSystem>x</AdSystem><AdTitle>t</AdTitle>
<Impression><![CDATA[ http://t/imp?a=1&b=2 ]]></Impression><Impression>http://t/imp2?x=1&amp;y=2</Impression><Error>http://t/err</Error>
<Creatives><Creative id="c-${ad}" AdID="aid-${ad}"><CompanionAds><Companion><TrackingEvents><Tracking event="start">http://t/companion</Tracking></TrackingEvents></Companion></CompanionAds></Creative>
<Creative id="c-${ad}"><Linear><Duration>00:00:0${seq + 4}.500</Duration><TrackingEvents><Tracking event="start">http://t/start</Tracking><Tracking event="progress" offset="00:00:01">http://t/p</Tracking>
<Tracking event="complete"><![CDATA[http://t/complete]]></Tracking></TrackingEvents><MediaFiles><MediaFile type="video/mp4" width="640" height="360" bitrate="800">
http://m/${ad}.mp4</MediaFile><Mezzanine>http://m/mezz.mp4</Mezzanine></MediaFiles></Linear></Creative></Creatives>${extra}</InLine></Ad>`;
const handmade = [
  ['a pod in reverse document order, entities and CDATA', `<?xml version="1.0"?><!-- c --><VAST version="4.0"><Error>http://t/root</Error>${inline('b', 2)}${inline('a', 1)}</VAST>`],
  ['a stand-alone ad after a pod', `<VAST version="3.0">${inline('a', 1)}<Ad id="solo"><InLine><Creatives><Creative><Linear><Duration>00:00:10</Duration><MediaFiles><MediaFile type="video/mp4">http://m/s.mp4</MediaFile></MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>`],
  ['a linear creative without media files, then one with', `<VAST version="3.0"><Ad id="x"><InLine><Creatives><Creative id="1"><Linear><Duration>00:00:10</Duration><MediaFiles></MediaFiles></Linear></Creative><Creative id="2"><Linear><Duration>00:00:05</Duration><MediaFiles><MediaFile>http://m/2.mp4</MediaFile></MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>`],
] as const;

describe('inline VAST fast path', () => {
  const full = new VastDecisionClient({ inlineFastPath: false });

  it.each([...samples, ...handmade])('reads %s as the full VAST client does', async (_name, text) => {
    const fast = inlineLinearAds(text);
    // Not taken: a wrapper, or no <VAST> root (VAST 1's VideoAdServingTemplate); every VAST 2–4 inline sample is.
    if (fast === undefined) { expect(text.includes('<Wrapper') || !parseElements(text)?.children.some((c) => c.name === 'VAST')).toBe(true); return; }
    const slow = await full.fromText(text, 'http://ads.test/vast');
    expect(fast).toEqual(slow.ok ? slow.ads : []);
  });

  it('takes the full path for wrappers and for what it does not read', () => {
    expect(inlineLinearAds('<VAST version="3.0"><Ad><Wrapper><VASTAdTagURI>http://x</VASTAdTagURI></Wrapper></Ad></VAST>')).toBeUndefined();
    expect(inlineLinearAds('<VAST version="3.0"><Ad><InLine>')).toBeUndefined();
    expect(inlineLinearAds('<VMAP/>')).toBeUndefined();
    expect(inlineLinearAds('<VAST version="3.0"><Ad id="x"><InLine></Ad></InLine></VAST>')).toBeUndefined();
  });
});
