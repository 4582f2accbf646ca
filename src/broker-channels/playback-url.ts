// The playback URL of a broker channel (issue 15 "Playback"): externalHLS plays its URL, a virtual channel its linear
// HLS; with hasAds both go through the SSAI proxy (masterEndpoint + the stream path after the adinsert's source_url).
import type { KeyVault } from '../api-keys/key-vault.js';
import { masterEndpoint, type AdinsertConfig } from '../adinserts/adinsert.schema.js';
import type { BrokerChannel } from './broker-channel.schema.js';

export const LINEAR_PREFIX = '/linear/';

/**
 * A virtual channel's path carries an HMAC of its guid: only readers the access lists let see the record learn the URL,
 * and every process with the same secret key computes the same one.
 */
export function linearToken(vault: KeyVault, channelGuid: string): string {
  return vault.lookupHash(`linear:${channelGuid}`).slice(0, 22);
}

export function linearUrl(publicUrl: string, channelGuid: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${LINEAR_PREFIX}${channelGuid}/${token}/master.m3u8`;
}

/**
 * Why an adinsert cannot serve a stream URL, or undefined when it can. Its type (live, broker) names the service it
 * belongs to, not the kind of stream: either serves a live channel and a VOD alike (issue 26).
 */
export function adinsertMismatch(streamUrl: string, adinsert: Pick<AdinsertConfig, 'sourceUrl'>): string | undefined {
  if (!streamUrl.startsWith(adinsert.sourceUrl)) return `the adinsert's source_url ${adinsert.sourceUrl} is not a prefix of the stream URL ${streamUrl}`;
  return undefined;
}

export function streamUrl(channel: Pick<BrokerChannel, 'guid' | 'type' | 'externalUrl'>, publicUrl: string, vault: KeyVault): string {
  return channel.type === 'externalHLS' ? channel.externalUrl ?? '' : linearUrl(publicUrl, channel.guid, linearToken(vault, channel.guid));
}

/** Through the proxy when hasAds and the configuration still fits; else the stream itself (plays without ads). */
export function playbackUrl(stream: string, channel: Pick<BrokerChannel, 'type' | 'hasAds'>, publicUrl: string, adinsert: AdinsertConfig | undefined): string {
  if (channel.hasAds !== 1 || !adinsert || adinsertMismatch(stream, adinsert)) return stream;
  return masterEndpoint(publicUrl, adinsert.guid) + stream.slice(adinsert.sourceUrl.length);
}
