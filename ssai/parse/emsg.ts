// DASH Event Message boxes (ISO/IEC 23009-1 §5.10.3.3, `emsg` version 0 and 1) at the head of a media segment: the
// inband events an AdaptationSet announces with an InbandEventStream (issue 33 item 2, SCTE 214-1 §6). A small box
// walker rather than an ISO-BMFF library: the one maintained parser in the engine's tree (codem-isoboxer, which the
// unit tests cross-check against) comes only as dash.js's dev dependency, and the proxy needs nothing of a segment but
// the top-level boxes before its first `moof` (where emsg boxes must be). Pure.

export type EmsgBox = {
  version: 0 | 1;
  schemeIdUri: string;
  value: string;
  timescale: number;
  /** v0: ticks after the segment's earliest presentation time */
  presentationTimeDelta?: number;
  /** v1: ticks on the track's media timeline */
  presentationTime?: number;
  /** ticks; 0xFFFFFFFF: unknown */
  eventDuration: number;
  id: number;
  messageData: Uint8Array;
};

/** Unknown event_duration (§5.10.3.3.3). */
export const EMSG_DURATION_UNKNOWN = 0xffff_ffff;

/** Box types after which no emsg can come: a segment's movie fragment or media data. */
const MEDIA_BOXES = new Set(['moof', 'mdat']);

/** The top-level boxes of `bytes` as far as they are whole: type, payload offset and end. */
function* boxes(bytes: Uint8Array): Generator<{ type: string; body: number; end: number }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at + 8 <= bytes.length) {
    let size = view.getUint32(at);
    const type = String.fromCharCode(bytes[at + 4]!, bytes[at + 5]!, bytes[at + 6]!, bytes[at + 7]!);
    let body = at + 8;
    if (size === 1) {
      if (at + 16 > bytes.length) return;
      size = Number(view.getBigUint64(at + 8));
      body = at + 16;
    } else if (size === 0) size = bytes.length - at; // to the end of the file
    if (size < body - at) return; // malformed: a box shorter than its header
    yield { type, body, end: at + size };
    at += size;
  }
}

/**
 * Whether the bytes read so far reach a box that ends the segment's head (moof, mdat): the reader of a segment can
 * stop there, its emsg boxes all read.
 */
export function headComplete(bytes: Uint8Array): boolean {
  for (const b of boxes(bytes)) if (MEDIA_BOXES.has(b.type)) return true;
  return false;
}

/** A NUL-terminated UTF-8 string at `at`: its text and the offset after the NUL; undefined past `end`. */
function cString(bytes: Uint8Array, at: number, end: number): [string, number] | undefined {
  const nul = bytes.indexOf(0, at);
  if (nul < 0 || nul >= end) return undefined;
  return [new TextDecoder().decode(bytes.subarray(at, nul)), nul + 1];
}

/** One emsg box's payload (after the box header), or why it cannot be read. */
function emsgOf(bytes: Uint8Array, body: number, end: number): EmsgBox | string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (body + 4 > end) return 'an emsg box is truncated';
  const version = bytes[body]!;
  let at = body + 4; // version and flags
  const u32 = (): number | undefined => { if (at + 4 > end) return undefined; const v = view.getUint32(at); at += 4; return v; };
  const str = (): string | undefined => { const s = cString(bytes, at, end); if (!s) return undefined; at = s[1]; return s[0]; };
  if (version === 0) {
    const schemeIdUri = str(); const value = str();
    const timescale = u32(); const presentationTimeDelta = u32(); const eventDuration = u32(); const id = u32();
    if (schemeIdUri === undefined || value === undefined || id === undefined || timescale === undefined || presentationTimeDelta === undefined || eventDuration === undefined) return 'an emsg box (version 0) is truncated';
    return { version, schemeIdUri, value, timescale, presentationTimeDelta, eventDuration, id, messageData: bytes.slice(at, end) };
  }
  if (version === 1) {
    const timescale = u32();
    if (at + 8 > end) return 'an emsg box (version 1) is truncated';
    const presentationTime = Number(view.getBigUint64(at));
    at += 8;
    const eventDuration = u32(); const id = u32();
    const schemeIdUri = str(); const value = str();
    if (schemeIdUri === undefined || value === undefined || id === undefined || timescale === undefined || eventDuration === undefined) return 'an emsg box (version 1) is truncated';
    return { version, schemeIdUri, value, timescale, presentationTime, eventDuration, id, messageData: bytes.slice(at, end) };
  }
  return `an emsg box of version ${version}`;
}

/**
 * The emsg boxes at the head of a segment (before its first moof/mdat), those of other versions or cut short
 * reported as `errors`. `bytes` may be the segment's head only.
 */
export function readEmsgs(bytes: Uint8Array): { boxes: EmsgBox[]; errors: string[] } {
  const out: EmsgBox[] = [];
  const errors: string[] = [];
  for (const b of boxes(bytes)) {
    if (MEDIA_BOXES.has(b.type)) break;
    if (b.type !== 'emsg') continue;
    if (b.end > bytes.length) { errors.push('an emsg box is truncated'); break; }
    const box = emsgOf(bytes, b.body, b.end);
    if (typeof box === 'string') errors.push(box);
    else out.push(box);
  }
  return { boxes: out, errors };
}
