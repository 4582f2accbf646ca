// Broker channel manager (spec 2.8–2.10, 4.3–4.5, issue 15): channels, listings, playlists on the api role; the linear
// HLS of virtual channels (packager/linear/) on the packager role.
import type { EnginePart } from '../kernel/part.js';
import { brokerChannelRoutes, channelAccess } from '../src/broker-channels/broker-channel.router.js';
import { listingRoutes } from '../src/broker-listings/listing.router.js';
import { playlistRoutes } from '../src/broker-playlists/playlist.router.js';

export const brokerPart: EnginePart = {
  name: 'broker',
  roles: ['api'],
  routes: (ctx) => {
    const access = channelAccess(ctx);
    return [...brokerChannelRoutes(ctx, access), ...listingRoutes(ctx, access), ...playlistRoutes(ctx)];
  },
};
