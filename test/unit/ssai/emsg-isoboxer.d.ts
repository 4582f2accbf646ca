// The part of codem-isoboxer (dash.js's ISO-BMFF parser, a dev dependency) the emsg tests read: it ships no types.
declare module 'codem-isoboxer' {
  type Emsg = { scheme_id_uri: string; value: string; timescale: number; presentation_time_delta?: number; presentation_time?: number | bigint; event_duration: number; id: number };
  const ISOBoxer: { parseBuffer(buffer: ArrayBufferLike): { fetchAll(type: 'emsg'): Emsg[] } };
  export default ISOBoxer;
}
