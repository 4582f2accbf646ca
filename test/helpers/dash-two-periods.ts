// The engine's own DASH encode served as two Periods (issue 33), for the multi-Period proxy and player tests: 0–8 s
// and 8–16 s, each with its own BaseURL, presentationTimeOffset and startNumber, the second without the small video
// rung; and an SCTE-35 splice_insert EventStream to put in a Period.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DOMParser, XMLSerializer, type Element } from '@xmldom/xmldom';
import { childrenNamed } from '../../ssai/parse/mpd-reader.js';
import { encodeScte35 } from '../../media/scte35-encoder.js';

/** Video 15,360 ticks a second (2 s segments), audio 48 kHz: the encode's segments that start at 8 s. */
const SPLIT = { video: 8 * 15_360, audio: 384_000, number: 5 };

/** The encode's MPD as two Periods, each listing its own segments under `<BaseURL>cmaf/</BaseURL>`. */
export async function twoPeriods(dir: string, cues: Array<string | undefined> = []): Promise<string> {
  const doc = new DOMParser().parseFromString(await readFile(path.join(dir, 'vod/cmaf/manifest.mpd'), 'utf8'), 'text/xml');
  const mpd = doc.documentElement!;
  const first = childrenNamed(mpd, 'Period')[0]!;
  const second = first.cloneNode(true) as Element;
  mpd.appendChild(second);
  const el = (name: string): Element => doc.createElementNS(mpd.namespaceURI, name);
  for (const [k, p] of [first, second].entries()) {
    p.setAttribute('id', `part-${k + 1}`);
    p.setAttribute('start', k ? 'PT8S' : 'PT0S');
    const base = el('BaseURL');
    base.appendChild(doc.createTextNode('cmaf/'));
    p.insertBefore(base, p.firstChild);
    for (const set of childrenNamed(p, 'AdaptationSet')) for (const rep of childrenNamed(set, 'Representation')) {
      // the second Period without the 256x144 rung: its ads mirror a track set of their own
      if (k && rep.getAttribute('id') === '1') { set.removeChild(rep); continue; }
      const tpl = childrenNamed(rep, 'SegmentTemplate')[0];
      if (!tpl) continue;
      const timeline = childrenNamed(tpl, 'SegmentTimeline')[0]!;
      while (timeline.firstChild) timeline.removeChild(timeline.firstChild);
      const audio = set.getAttribute('contentType') === 'audio';
      const s = (t: number | undefined, d: number, r: number): void => {
        const x = el('S');
        if (t !== undefined) x.setAttribute('t', String(t));
        x.setAttribute('d', String(d));
        if (r) x.setAttribute('r', String(r));
        timeline.appendChild(x);
      };
      if (!k) {
        if (audio) { s(0, 95_232, 0); s(undefined, 96_256, 2); } else s(0, 30_720, 3);
        continue;
      }
      tpl.setAttribute('presentationTimeOffset', String(audio ? SPLIT.audio : SPLIT.video));
      tpl.setAttribute('startNumber', String(SPLIT.number));
      if (audio) { s(SPLIT.audio, 96_256, 2); s(undefined, 95_232, 0); } else s(SPLIT.video, 30_720, 3);
    }
  }
  [first, second].forEach((p, k) => {
    const cue = cues[k];
    if (cue) p.insertBefore(new DOMParser().parseFromString(cue, 'text/xml').documentElement!, childrenNamed(p, 'AdaptationSet')[0]!);
  });
  return new XMLSerializer().serializeToString(doc);
}

/** An EventStream with one splice_insert (out of network, `seconds` long, auto return) at `atMs` of its Period. */
export function spliceEventStream(id: number, atMs: number, seconds = 4): string {
  const insert = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: id, outOfNetwork: true, breakDuration: seconds * 90_000, autoReturn: true, availNum: 1, availsExpected: 1 } }).base64;
  return `<EventStream xmlns="urn:mpeg:dash:schema:mpd:2011" schemeIdUri="urn:scte:scte35:2014:xml+bin" timescale="1000">
<Event presentationTime="${atMs}" duration="${seconds * 1000}" id="1"><Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>${insert}</Binary></Signal></Event></EventStream>`;
}
