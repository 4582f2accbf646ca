// The cheap path for the common ad server answer (issue 19 point 4): an inline VAST document (no wrapper) read by a
// small tokenizer straight into the linear ads, without a DOM and without @dailymotion/vast-client. Building the DOM and
// running the client cost ~2 ms per decision, which 10,000 viewers with their own ads cannot afford at a break start.
// Anything else (a wrapper, a document the tokenizer does not follow) returns undefined and takes the full path; a test
// holds both paths to the same answers over the IAB samples of the shared vectors.
import { universalAdIdOf, type LinearAd } from './linear-ad.js';

type El = { name: string; attrs: Record<string, string>; children: El[]; text: string };

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e] ?? m;
  });
}

const localName = (qname: string): string => qname.slice(qname.indexOf(':') + 1);
/** XML white space (char codes, not regexes: this loop runs per character of every ad answer) */
const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

/** A well-formed XML document as elements (local names), or undefined for anything it does not follow. */
export function parseElements(xml: string): El | undefined {
  const root: El = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: El[] = [root];
  let i = 0;
  const n = xml.length;
  while (i < n) {
    const lt = xml.indexOf('<', i);
    const top = stack[stack.length - 1]!;
    if (lt < 0) { top.text += decodeEntities(xml.slice(i)); break; }
    if (lt > i) top.text += decodeEntities(xml.slice(i, lt));
    if (xml.startsWith('<![CDATA[', lt)) {
      const end = xml.indexOf(']]>', lt + 9);
      if (end < 0) return undefined;
      top.text += xml.slice(lt + 9, end);
      i = end + 3;
    } else if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt + 4);
      if (end < 0) return undefined;
      i = end + 3;
    } else if (xml.startsWith('<?', lt) || xml.startsWith('<!', lt)) {
      const end = xml.indexOf('>', lt + 2);
      if (end < 0) return undefined;
      i = end + 1;
    } else if (xml[lt + 1] === '/') {
      const end = xml.indexOf('>', lt + 2);
      if (end < 0) return undefined;
      const name = localName(xml.slice(lt + 2, end).trim());
      if (stack.length < 2 || top.name !== name) return undefined;
      stack.pop();
      i = end + 1;
    } else {
      // a start tag: name, then attributes with quoted values, up to '>' or '/>'
      let j = lt + 1;
      for (let c = xml.charCodeAt(j); j < n && !isSpace(c) && c !== 47 && c !== 62; c = xml.charCodeAt(++j));
      const el: El = { name: localName(xml.slice(lt + 1, j)), attrs: {}, children: [], text: '' };
      if (!el.name) return undefined;
      for (;;) {
        while (j < n && isSpace(xml.charCodeAt(j))) j++;
        if (j >= n) return undefined;
        if (xml[j] === '>' || (xml[j] === '/' && xml[j + 1] === '>')) break;
        const eq = xml.indexOf('=', j);
        if (eq < 0) return undefined;
        const attr = xml.slice(j, eq).trim();
        let k = eq + 1;
        while (k < n && isSpace(xml.charCodeAt(k))) k++;
        const q = xml[k];
        if (q !== '"' && q !== "'") return undefined;
        const close = xml.indexOf(q, k + 1);
        if (close < 0 || !attr || /[\s<>]/.test(attr)) return undefined;
        el.attrs[localName(attr)] = decodeEntities(xml.slice(k + 1, close));
        j = close + 1;
      }
      top.children.push(el);
      if (xml[j] === '/') i = j + 2;
      else { stack.push(el); i = j + 1; }
    }
  }
  return stack.length === 1 ? root : undefined;
}

const child = (el: El | undefined, name: string): El | undefined => el?.children.find((c) => c.name === name);
const children = (el: El | undefined, name: string): El[] => el?.children.filter((c) => c.name === name) ?? [];
const textOf = (el: El): string => el.text.trim();
const int = (v: string | undefined): number => { const x = Number.parseInt(v ?? '', 10); return Number.isFinite(x) ? x : 0; };

/** VAST's HH:MM:SS(.mmm) as seconds; undefined when malformed (as vast-client, which then drops the creative). */
function duration(s: string | undefined): number | undefined {
  const m = /^(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec((s ?? '').trim());
  if (!m) return undefined;
  const [h, min, sec] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (min > 59 || sec > 60) return undefined;
  return h * 3600 + min * 60 + sec;
}

/** Whether a creative has something to show: a linear media file, or non-linear or companion ads (vast-client's test). */
const hasMedia = (creative: El): boolean => children(child(child(creative, 'Linear'), 'MediaFiles'), 'MediaFile').some((m) => textOf(m))
  || child(creative, 'NonLinearAds') !== undefined || child(creative, 'CompanionAds') !== undefined;

const EVENTS = ['start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'] as const;

/**
 * The linear ads of an inline VAST document, in pod order; undefined when the document is not one this path reads
 * (not VAST, a wrapper, not well-formed): the caller then takes the full VAST client.
 */
export function inlineLinearAds(xml: string): LinearAd[] | undefined {
  if (xml.includes('<Wrapper')) return undefined;
  const doc = parseElements(xml);
  const vast = doc?.children.find((c) => c.name === 'VAST');
  if (!vast || doc!.children.length !== 1) return undefined;
  const rootErrors = children(vast, 'Error').map(textOf);
  const out: LinearAd[] = [];
  for (const ad of children(vast, 'Ad')) {
    const inline = child(ad, 'InLine');
    if (!inline) return undefined; // neither inline nor a wrapper we know: the full client decides
    // An ad without any media (no media file, no non-linear or companion) is an error to report (303, as the full
    // client finds it): the full client decides and reports it (issue 31 point 7).
    if (!children(child(inline, 'Creatives'), 'Creative').some(hasMedia)) return undefined;
    for (const creative of children(child(inline, 'Creatives'), 'Creative')) {
      const linear = child(creative, 'Linear');
      if (!linear) continue;
      const seconds = duration(child(linear, 'Duration')?.text);
      const files = children(child(linear, 'MediaFiles'), 'MediaFile').filter((m) => textOf(m));
      if (!seconds || !files.length) continue;
      const tracking = children(child(linear, 'TrackingEvents'), 'Tracking');
      const ev = (k: string): string[] => tracking.filter((t) => t.attrs.event === k).map(textOf).filter(Boolean);
      const creativeAdId = creative.attrs.AdID ?? creative.attrs.adID ?? creative.attrs.adId;
      const result: LinearAd = {
        adId: String(ad.attrs.id || creativeAdId || ''), creativeId: String(creative.attrs.id || creativeAdId || ''), duration: seconds,
        mediaFiles: files.map((m) => ({ url: textOf(m), type: m.attrs.type ?? '', width: int(m.attrs.width), height: int(m.attrs.height), bitrate: int(m.attrs.bitrate) })),
        trackingEvents: {
          impression: children(inline, 'Impression').map(textOf).filter(Boolean),
          start: ev(EVENTS[0]), firstQuartile: ev(EVENTS[1]), midpoint: ev(EVENTS[2]), thirdQuartile: ev(EVENTS[3]), complete: ev(EVENTS[4]),
          error: [...children(inline, 'Error').map(textOf), ...rootErrors].filter(Boolean),
        },
      };
      const universal = child(creative, 'UniversalAdId');
      const universalAdId = universal ? universalAdIdOf(universal.attrs.idRegistry, textOf(universal) || universal.attrs.idValue) : undefined;
      if (universalAdId) result.universalAdId = universalAdId;
      const adSystem = child(inline, 'AdSystem');
      if (adSystem && textOf(adSystem)) result.adSystem = textOf(adSystem);
      const seq = ad.attrs.sequence;
      if (seq !== undefined && seq !== '' && Number.isFinite(Number(seq))) result.sequence = Number(seq);
      out.push(result);
      break; // one linear creative per ad
    }
  }
  return out.sort((a, b) => (a.sequence ?? Infinity) - (b.sequence ?? Infinity));
}
