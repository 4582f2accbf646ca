import type { EnginePart } from '../part.js';
import { inputRoutes } from './input.router.js';
import { deviceRoutes } from '../devices/device.router.js';
import { statisticsRoutes } from '../statistics/statistics.router.js';
import { createManagedInputs } from './managed-inputs.js';

/**
 * Managed inputs, connected devices and channel statistics. Listed in src/parts.ts BEFORE the live part:
 * GET /channels/statistics must be registered before GET /channels/:workflowId, or Express takes
 * "statistics" for a workflow id.
 */
export const inputsPart: EnginePart = {
  name: 'inputs',
  roles: ['api'],
  init: (ctx) => {
    ctx.services.managedInputs = createManagedInputs(ctx);
  },
  routes: (ctx) => [...statisticsRoutes(ctx), ...inputRoutes(ctx), ...deviceRoutes(ctx)],
};
