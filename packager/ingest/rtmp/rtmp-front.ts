// The RTMP_PUSH front of one channel input: its stream key on the shared RTMP server, its CIDR list, and the
// loopback FLV relay the channel's encoder reads once a sender is accepted.
import type { IngestFront, IngestStats } from '../ingest-front.js';
import { allListsFilter, plainAddress } from '../address-filter.js';
import { FrontEvents } from '../front-events.js';
import { FlvRelay } from './flv-relay.js';
import type { RtmpServer } from './rtmp-server.js';
import type { PublishSink } from './rtmp-session.js';

export interface RtmpFrontOptions {
  server: RtmpServer;
  streamKey: string;
  /** the URL path's app; `live` for every address src/inputs/ingest.ts hands out */
  app?: string;
  cidrs: readonly string[];
  /** further allow-lists that must admit the sender too (a workflow's inputWhitelistCIDRs) */
  alsoAllowedBy?: readonly (readonly string[])[] | undefined;
  now?: () => number;
}

export async function openRtmpFront(options: RtmpFrontOptions): Promise<IngestFront> {
  const now = options.now ?? Date.now;
  const events = new FrontEvents();
  const relay = new FlvRelay();
  const relayPort = await relay.listen();
  const allows = allListsFilter([options.cidrs, ...(options.alsoAllowedBy ?? [])]);
  let bytesIn = 0;
  let current: PublishSink | undefined;
  let hangUpCurrent: ((reason: string) => void) | undefined;
  let closed = false;

  const unregister = options.server.register(options.streamKey, {
    app: options.app ?? 'live',
    allows,
    busy: () => current !== undefined,
    rejected: (reason, remoteAddress) => events.emit({ type: 'rejected', reason, remoteAddress: plainAddress(remoteAddress), at: now() }),
    accept: (remoteAddress, hangUp) => {
      relay.begin();
      const sink: PublishSink = {
        write: (tag) => {
          bytesIn += tag.data.length;
          relay.write(tag);
        },
        end: (reason) => {
          if (current !== sink) return;
          current = undefined;
          relay.end();
          events.emit({ type: 'disconnected', reason, at: now() });
        },
      };
      current = sink;
      hangUpCurrent = hangUp;
      events.emit({ type: 'connected', remoteAddress: plainAddress(remoteAddress), at: now() });
      return sink;
    },
  });

  return {
    protocol: 'RTMP_PUSH',
    spawnEncoderOn: 'connected',
    encoderInputArgs: () => ['-f', 'flv', '-i', `tcp://127.0.0.1:${relayPort}`],
    subscribe: (listener) => events.subscribe(listener),
    isConnected: () => current !== undefined,
    stats: (): IngestStats => ({ bytesIn }),
    drain: async () => {
      // the relay has written every tag the sender sent: ending it lets the encoder read them, then its end
      current = undefined;
      relay.end();
      hangUpCurrent?.('the channel stopped');
    },
    close: async () => {
      if (closed) return;
      closed = true;
      unregister();
      // Hang up the sender: the session ends its sink, which ends the relay and reports the disconnect.
      hangUpCurrent?.('the input closed');
      current = undefined;
      await relay.close();
      events.clear();
    },
  };
}
