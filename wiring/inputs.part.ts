import type { EnginePart } from '../kernel/part.js';
import { inputRoutes } from '../src/inputs/input.router.js';
import { deviceRoutes } from '../src/devices/device.router.js';
import { statisticsRoutes } from '../src/statistics/statistics.router.js';
import { createManagedInputs } from '../src/inputs/managed-inputs.js';

/**
 * Managed inputs, connected devices and channel statistics. Listed in wiring/parts.ts BEFORE the live part:
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
