// The contract between a channel's ingest (how a signal reaches the engine) and its encoder (one ffmpeg per
// channel). Push protocols (RTMP_PUSH, SRT_PUSH, RIST, RTP, RTP_FEC) get a front that checks who may send
// (stream key, passphrase, CIDR list) before anything reaches ffmpeg; pull protocols (URL_PULL, RTMP_PULL, MP4)
// get a front that only describes the source. The encoder supervisor sees nothing else of either.

/** The protocols of spec 2.4 (`SRT_PUSH` stands for the spec's `<VENDOR>_PUSH`). */
export type IngestProtocol = 'SRT_PUSH' | 'RIST' | 'RTP' | 'RTP_FEC' | 'RTMP_PUSH' | 'RTMP_PULL' | 'URL_PULL' | 'MP4';

export type IngestEvent =
  /** a sender was accepted (push) or the source answered (pull) */
  | { type: 'connected'; remoteAddress?: string; at: number }
  /** the sender went away or the source stopped answering */
  | { type: 'disconnected'; reason: string; at: number }
  /** a sender was refused: wrong stream key or passphrase, address outside the CIDR list */
  | { type: 'rejected'; reason: string; remoteAddress?: string; at: number };

export interface IngestStats {
  /** bytes received from the sender since the front opened */
  bytesIn: number;
  /** datagrams known lost (UDP protocols), when the protocol can tell */
  packetsLost?: number;
  /** of those, datagrams rebuilt from FEC (RTP_FEC); added by the ingest branch, additive */
  packetsRecovered?: number;
}

export interface IngestFront {
  readonly protocol: IngestProtocol;
  /**
   * `connected`: spawn the encoder only after a `connected` event (the front hands the stream over);
   * `start`: spawn the encoder at once (it listens itself, or pulls the source).
   */
  readonly spawnEncoderOn: 'connected' | 'start';
  /** ffmpeg arguments that open this input for the encoder, ending with `-i <url>` */
  encoderInputArgs(): string[];
  subscribe(listener: (event: IngestEvent) => void): () => void;
  /**
   * Push fronts: true while a sender is accepted. A sender that pushes before the channel subscribed (an encoder
   * or device started first) was reported to nobody; the subscriber checks this once. Added by ingest, additive.
   */
  isConnected?(): boolean;
  stats(): IngestStats;
  /**
   * Push fronts, at a graceful stop: hands the encoder everything the sender sent so far, then ends the encoder's
   * input (it finishes by itself), so the archive keeps the seconds that were still in transit (0.2–1.4 s measured)
   * instead of losing them to an interrupted encoder. The sender is hung up; close() still follows.
   */
  drain?(): Promise<void>;
  /** stops listening and closes every socket and child process the front opened; idempotent */
  close(): Promise<void>;
}
