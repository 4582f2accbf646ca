import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { notFound } from '../../kernel/core/errors.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { org } from '../../kernel/http/principal.js';
import { InputStore } from '../inputs/input.store.js';
import { deviceSettings } from '../inputs/input.schema.js';
import { DeviceStore, deviceView } from './device.store.js';

/** A device id is its serial or a name its firmware chose: printable, no slashes. */
const deviceParams = z.object({ id: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'letters, digits, ".", "_", ":" and "-", up to 64') });

const heartbeatBody = z.object({
  name: z.string().trim().min(1).max(128).optional(),
  settings: deviceSettings.optional(),
  settingsVersion: z.number().int().min(0).optional(),
});

/**
 * Connected devices (spec 2.4): GET /devices, and the heartbeat through which a device registers and
 * reports (API key for the device firmware, or ID token). Online means a heartbeat in the last 60 s.
 */
export function deviceRoutes(ctx: EngineContext): RouteSpec[] {
  const devices = new DeviceStore(ctx.store.db);
  const inputs = new InputStore(ctx.store.db);
  return [
    route({
      method: 'get', path: '/devices', tag: 'devices',
      summary: 'List connected devices with their managed input, connectivity and settings-sync state',
      handler: async ({ principal }) => {
        const organizationId = org(principal);
        const [list, inputList] = await Promise.all([devices.list(organizationId), inputs.list(organizationId)]);
        const inputOf = new Map(inputList.filter((input) => input.deviceId).map((input) => [input.deviceId, input.id]));
        const now = ctx.clock.nowMs();
        return { items: list.map((device) => deviceView(device, now, inputOf.get(device.id))) };
      },
    }),
    route({
      method: 'post', path: '/devices/:id/heartbeat', tag: 'devices', params: deviceParams, body: heartbeatBody,
      summary: 'A device reports that it is online, with its name, settings and settings version; the answer carries settings to apply',
      handler: async ({ params, body, principal }) => {
        const organizationId = org(principal);
        const owner = await devices.owner(params.id);
        // Another organization's device id answers 404 like any unknown id, and is never taken over.
        if (owner !== undefined && owner !== organizationId) throw notFound('device', params.id);
        const device = await devices.heartbeat(organizationId, params.id, body, ctx.clock.nowMs());
        if (!device) throw notFound('device', params.id);
        const input = await inputs.byDevice(organizationId, device.id);
        return deviceView(device, ctx.clock.nowMs(), input?.id);
      },
    }),
  ];
}
