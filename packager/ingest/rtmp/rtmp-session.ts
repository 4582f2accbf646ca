// One RTMP connection from a publisher: handshake, connect / createStream / publish, then its audio, video and
// metadata. It decides nothing about who may publish: at `publish` it asks the server (stream key, address)
// and either streams into the sink it is given or answers an error status and hangs up.
import { randomBytes } from 'node:crypto';
import type net from 'node:net';
import { decodeAmf0, encodeAmf0, type AmfValue } from './amf0.js';
import { ChunkReader, writeMessage, type RtmpMessage } from './chunk-stream.js';
import { TAG_AUDIO, TAG_DATA, TAG_VIDEO, type FlvTag } from './flv-relay.js';

const HANDSHAKE_BYTES = 1536;
const OUR_CHUNK_SIZE = 4096;
const WINDOW_BYTES = 5_000_000;
/** Time a publisher gets from TCP connect to `publish`, and the longest silence once streaming. */
export const RTMP_SETUP_TIMEOUT_MS = 10_000;
export const RTMP_IDLE_TIMEOUT_MS = 10_000;

const MSG_SET_CHUNK_SIZE = 1;
const MSG_ACK = 3;
const MSG_WINDOW_ACK_SIZE = 5;
const MSG_SET_PEER_BANDWIDTH = 6;
const MSG_AUDIO = 8;
const MSG_VIDEO = 9;
const MSG_DATA_AMF3 = 15;
const MSG_COMMAND_AMF3 = 17;
const MSG_DATA_AMF0 = 18;
const MSG_COMMAND_AMF0 = 20;

/** Where an accepted stream goes. */
export interface PublishSink {
  write(tag: FlvTag): void;
  /** the sender stopped publishing or its connection ended */
  end(reason: string): void;
}

export type PublishDecision = { accept: true; sink: (hangUp: (reason: string) => void) => PublishSink } | { accept: false; reason: string; status: string };

export interface PublishRequest {
  app: string;
  streamKey: string;
  remoteAddress: string;
}

export class RtmpSession {
  private state: 'c0c1' | 'c2' | 'chunks' | 'closed' = 'c0c1';
  private buffered: Buffer = Buffer.alloc(0);
  private readonly reader = new ChunkReader();
  private app = '';
  private sink: PublishSink | undefined;
  private bytesSinceAck = 0;
  private totalBytes = 0;
  private peerWindow = 0;
  /** bytes of media received since accepted; the front's stats read it */
  mediaBytes = 0;
  /** the message stream our createStream answer handed out; status messages go there */
  private readonly publishStreamId = 1;

  constructor(
    private readonly socket: net.Socket,
    private readonly decide: (request: PublishRequest) => PublishDecision,
    private readonly onBytes: (count: number) => void,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(RTMP_SETUP_TIMEOUT_MS, () => this.close('no publish in time or the sender went silent'));
    socket.on('data', (bytes: Buffer) => this.receive(bytes));
    socket.on('error', () => this.close('connection error'));
    socket.on('close', () => this.close('connection closed'));
  }

  get remoteAddress(): string {
    return this.socket.remoteAddress ?? '';
  }

  isClosed(): boolean {
    return this.state === 'closed';
  }

  close(reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.sink?.end(reason);
    this.sink = undefined;
    this.socket.destroy();
  }

  private receive(bytes: Buffer): void {
    if (this.state === 'closed') return;
    this.onBytes(bytes.length);
    try {
      if (this.state !== 'chunks') {
        this.buffered = Buffer.concat([this.buffered, bytes]);
        if (!this.handshake()) return;
        bytes = this.buffered;
        this.buffered = Buffer.alloc(0);
        if (bytes.length === 0) return;
      }
      this.acknowledge(bytes.length);
      for (const message of this.reader.push(bytes)) {
        this.handle(message);
        if (this.isClosed()) return;
      }
    } catch (error) {
      this.close(`protocol error: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The simple handshake (zeroed version field in S1, so clients skip digest validation); true when done. */
  private handshake(): boolean {
    if (this.state === 'c0c1') {
      if (this.buffered.length < 1 + HANDSHAKE_BYTES) return false;
      if (this.buffered[0] !== 3) throw new Error(`RTMP version ${String(this.buffered[0])} is not 3`);
      const c1 = this.buffered.subarray(1, 1 + HANDSHAKE_BYTES);
      const s1 = randomBytes(HANDSHAKE_BYTES);
      s1.fill(0, 0, 8);
      this.socket.write(Buffer.concat([Buffer.from([3]), s1, c1]));
      this.buffered = this.buffered.subarray(1 + HANDSHAKE_BYTES);
      this.state = 'c2';
    }
    if (this.state === 'c2') {
      if (this.buffered.length < HANDSHAKE_BYTES) return false;
      this.buffered = this.buffered.subarray(HANDSHAKE_BYTES);
      this.state = 'chunks';
      return true;
    }
    return this.state === 'chunks';
  }

  /** Acknowledgement every window the peer asked for (RTMP 1.0 5.4.3). */
  private acknowledge(count: number): void {
    this.totalBytes += count;
    this.bytesSinceAck += count;
    if (this.peerWindow > 0 && this.bytesSinceAck >= this.peerWindow) {
      this.bytesSinceAck = 0;
      const payload = Buffer.alloc(4);
      payload.writeUInt32BE(this.totalBytes >>> 0);
      this.send({ chunkStreamId: 2, type: MSG_ACK, streamId: 0, timestamp: 0, payload });
    }
  }

  private send(message: RtmpMessage): void {
    if (this.state === 'closed') return;
    this.socket.write(writeMessage(message, OUR_CHUNK_SIZE));
  }

  private control(type: number, value: number, extra?: number): void {
    const payload = Buffer.alloc(extra === undefined ? 4 : 5);
    payload.writeUInt32BE(value);
    if (extra !== undefined) payload[4] = extra;
    if (type === MSG_SET_CHUNK_SIZE) {
      // our outgoing chunk size applies to what we write after this message
      this.socket.write(writeMessage({ chunkStreamId: 2, type, streamId: 0, timestamp: 0, payload }, 128));
      return;
    }
    this.send({ chunkStreamId: 2, type, streamId: 0, timestamp: 0, payload });
  }

  private command(streamId: number, ...values: AmfValue[]): void {
    this.send({ chunkStreamId: 3, type: MSG_COMMAND_AMF0, streamId, timestamp: 0, payload: encodeAmf0(...values) });
  }

  private handle(message: RtmpMessage): void {
    switch (message.type) {
      case MSG_WINDOW_ACK_SIZE:
        if (message.payload.length >= 4) this.peerWindow = message.payload.readUInt32BE(0);
        return;
      case MSG_COMMAND_AMF0:
        this.handleCommand(message.payload);
        return;
      case MSG_DATA_AMF0:
        this.handleData(message.payload);
        return;
      // The AMF3 forms some Flash-era encoders send start with one format byte, then carry AMF0 values.
      case MSG_COMMAND_AMF3:
        this.handleCommand(message.payload.subarray(1));
        return;
      case MSG_DATA_AMF3:
        this.handleData(message.payload.subarray(1));
        return;
      case MSG_AUDIO:
      case MSG_VIDEO:
        if (!this.sink || message.payload.length === 0) return;
        this.mediaBytes += message.payload.length;
        this.sink.write({ type: message.type === MSG_AUDIO ? TAG_AUDIO : TAG_VIDEO, timestamp: message.timestamp, data: message.payload });
        return;
      default:
        // chunk size (read by the reader), acks, user control, bandwidth: nothing to answer as a receiver
        return;
    }
  }

  private handleCommand(payload: Buffer): void {
    const streamId = this.publishStreamId;
    const [name, transaction, commandObject, ...args] = decodeAmf0(payload);
    const txid = typeof transaction === 'number' ? transaction : 0;
    switch (name) {
      case 'connect': {
        const object = commandObject;
        const app = object && typeof object === 'object' && !Array.isArray(object) && !(object instanceof Date) ? object.app : undefined;
        this.app = typeof app === 'string' ? app.replace(/\/+$/, '') : '';
        this.control(MSG_WINDOW_ACK_SIZE, WINDOW_BYTES);
        this.control(MSG_SET_PEER_BANDWIDTH, WINDOW_BYTES, 2);
        this.control(MSG_SET_CHUNK_SIZE, OUR_CHUNK_SIZE);
        this.command(0, '_result', txid,
          { fmsVer: 'FMS/3,0,1,123', capabilities: 31 },
          { level: 'status', code: 'NetConnection.Connect.Success', description: 'Connection succeeded.', objectEncoding: 0 });
        return;
      }
      case 'createStream':
        this.command(0, '_result', txid, null, 1);
        return;
      case 'publish':
        this.publish(streamId, typeof args[0] === 'string' ? args[0] : '');
        return;
      case 'play':
        this.command(streamId, 'onStatus', 0, null,
          { level: 'error', code: 'NetStream.Play.Failed', description: 'This server takes published streams only.' });
        this.socket.end();
        this.close('a player connected to an ingest-only server');
        return;
      case 'FCUnpublish':
      case 'deleteStream':
      case 'closeStream':
        if (this.sink) this.close('the sender stopped publishing');
        return;
      default:
        // releaseStream, FCPublish, _checkbw …: publishers do not wait for their answers
        return;
    }
  }

  private publish(streamId: number, name: string): void {
    if (this.sink) return;
    // A key may carry query parameters some encoders add (`key?bitrate=…`); they are not part of the key.
    const streamKey = name.split('?')[0] ?? '';
    const decision = this.decide({ app: this.app, streamKey, remoteAddress: this.remoteAddress });
    if (!decision.accept) {
      this.command(streamId, 'onStatus', 0, null, { level: 'error', code: decision.status, description: decision.reason });
      this.state = 'closed';
      // Let the status reach the sender before the hang-up, so it can tell why.
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 1_000).unref();
      return;
    }
    this.sink = decision.sink((reason) => this.close(reason));
    this.socket.setTimeout(RTMP_IDLE_TIMEOUT_MS);
    this.command(streamId, 'onStatus', 0, null, { level: 'status', code: 'NetStream.Publish.Start', description: `${streamKey} is now published.` });
  }

  private handleData(payload: Buffer): void {
    if (!this.sink) return;
    let values = decodeAmf0(payload);
    // Publishers wrap metadata in @setDataFrame; an FLV file carries only onMetaData and its object.
    if (values[0] === '@setDataFrame') values = values.slice(1);
    if (values[0] !== 'onMetaData') return;
    this.sink.write({ type: TAG_DATA, timestamp: 0, data: encodeAmf0(...values) });
  }
}
