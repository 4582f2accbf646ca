// The ids of an ad as the manifest names them (issue 31 point 9): read from VAST 4 by both readers (the inline fast
// path and the full client) over the IAB samples, and written as RFC 8216 quoted strings.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VastDecisionClient } from '../../../ssai/decide/vast-decision.js';
import { inlineLinearAds } from '../../../ssai/parse/vast-inline.js';
import { universalAdIdOf, type LinearAd } from '../../../ssai/parse/linear-ad.js';
import { adIdAttributes } from '../../../ssai/stitch/manifest-rewriter.js';
import { VECTORS_DIR, vectorPath } from '../../helpers/vectors.js';

const full = new VastDecisionClient({ inlineFastPath: false });

/** The ads of a document by both readers, which must agree. */
async function bothReaders(text: string): Promise<LinearAd[]> {
  const fast = inlineLinearAds(text);
  const slow = await full.fromText(text, 'http://ads.test/vast');
  expect(slow.ok).toBe(true);
  const ads = slow.ok ? slow.ads : [];
  expect(fast).toEqual(ads);
  return ads;
}

const ids = (ad: LinearAd) => ({ adId: ad.adId, creativeId: ad.creativeId, universalAdId: ad.universalAdId, adSystem: ad.adSystem });

describe('ad ids', () => {
  it.skipIf(!VECTORS_DIR).each([
    ['4.0', 'Universal_Ad_ID-test.xml'], ['4.1', 'Universal_Ad_ID-test.xml'], ['4.1', 'Inline_Linear_Tag-test.xml'],
  ])('reads the creative id, UniversalAdId and AdSystem of the IAB %s sample %s on both paths', async (version, file) => {
    const ads = await bothReaders(readFileSync(vectorPath('vast-iab', version, file), 'utf8'));
    expect(ads.length).toBeGreaterThan(0);
    expect(ids(ads[0]!)).toMatchObject({ creativeId: '5480', universalAdId: 'Ad-ID:8465', adSystem: 'iabtechlab' });
  });

  it('writes the value alone without a registry, and leaves out what the VAST does not give', async () => {
    const doc = (universal: string, system: string) => `<VAST version="4.1"><Ad id="a1"><InLine>${system}<AdTitle>t</AdTitle><Creatives><Creative id="c1">${universal}
<Linear><Duration>00:00:05</Duration><MediaFiles><MediaFile type="video/mp4">http://m/a.mp4</MediaFile></MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>`;
    expect(ids((await bothReaders(doc('<UniversalAdId>X-1</UniversalAdId>', '<AdSystem version="2">sys</AdSystem>')))[0]!))
      .toEqual({ adId: 'a1', creativeId: 'c1', universalAdId: 'X-1', adSystem: 'sys' });
    expect(ids((await bothReaders(doc('<UniversalAdId idRegistry="unknown">unknown</UniversalAdId>', '')))[0]!))
      .toEqual({ adId: 'a1', creativeId: 'c1', universalAdId: undefined, adSystem: undefined });
    expect(universalAdIdOf('ad-id.org', ' ABCD1234000H ')).toBe('ad-id.org:ABCD1234000H');
    expect(universalAdIdOf('unknown', 'V')).toBe('V');
  });

  it('writes the DATERANGE attributes as quoted strings an ad server cannot break', () => {
    expect(adIdAttributes({ id: 'a"1\r\n', creativeId: 'c\u00001', universalAdId: 'Ad-ID:8465', adSystem: 'sys "x"' }))
      .toBe('X-AD-ID="a1",X-CREATIVE-ID="c1",X-UNIVERSAL-AD-ID="Ad-ID:8465",X-AD-SYSTEM="sys x"');
    expect(adIdAttributes({ id: 'a' })).toBe('X-AD-ID="a"');
    expect(adIdAttributes({ id: 'x'.repeat(1000) })).toHaveLength('X-AD-ID=""'.length + 256);
  });
});
