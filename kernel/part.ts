import type { IncomingMessage, ServerResponse } from 'node:http';
import type express from 'express';
import type { EngineContext } from './context.js';
import type { Role } from './core/config.js';
import type { RouteSpec } from './http/route.js';
import type { FastGet } from './http/fast-get.js';

/**
 * One capability of the engine (auth, VOD, SSAI, live …). The engine asks each part present in this
 * process's roles for its routes, raw mounts and workers; parts talk to each other only through
 * `ctx.services` interfaces.
 */
export interface EnginePart {
  name: string;
  /** the part runs when any of these roles is enabled */
  roles: readonly Role[];
  /** called first, in order: put services into ctx.services here */
  init?(ctx: EngineContext): Promise<void> | void;
  routes?(ctx: EngineContext): RouteSpec[];
  /** Express mounts that are not JSON routes (media files, uploads) */
  mounts?(ctx: EngineContext): Array<(app: express.Express) => void>;
  /**
   * Hot paths served before Express (the SSAI proxy): returns true when it took the request. Helmet does not see
   * these answers: each writes RAW_SECURITY_HEADERS (kernel/http/raw-security-headers.ts) itself.
   */
  rawHandler?(ctx: EngineContext): (req: IncomingMessage, res: ServerResponse) => boolean;
  /**
   * The plainest GETs of a hot path answered on the socket before node:http (kernel/http/fast-get.ts); the same
   * answers as its rawHandler gives, security headers included.
   */
  fastGet?(ctx: EngineContext): FastGet | undefined;
  /** starts background work after the server listens (queues, schedulers) */
  start?(ctx: EngineContext): Promise<void> | void;
}
