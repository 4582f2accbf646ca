// A route is declared once: its zod schemas validate the request and feed the OpenAPI document.
import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Principal, Permission } from './principal.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete' | 'patch';

/**
 * none: open (VOD reads, auth service); idToken: ID token only (public broker paths);
 * apiKey: X-Api-Key only (private paths); either: live paths take both.
 */
export type AuthMode = 'none' | 'idToken' | 'apiKey' | 'either';

export interface RouteContext<Body, Query, Params> {
  body: Body;
  query: Query;
  params: Params;
  /** Present on every route whose auth is not 'none'. */
  principal: Principal | undefined;
  req: Request;
  res: Response;
}

export interface RouteSpec<
  BodySchema extends z.ZodType = z.ZodType,
  QuerySchema extends z.ZodType = z.ZodType,
  ParamsSchema extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** Express-style path: `/broker/vod/list/:guid`. */
  path: string;
  summary: string;
  tag: string;
  /** Defaults to the rule of DESIGN.md for the path (authModeForPath). */
  auth?: AuthMode;
  /** Defaults to read for GET and write otherwise. */
  permission?: Permission;
  body?: BodySchema;
  query?: QuerySchema;
  params?: ParamsSchema;
  /** Documented only; the handler's answer is sent as JSON. */
  response?: z.ZodType;
  successStatus?: number;
  /** Returns the JSON body, or undefined when the handler wrote the response itself. */
  handler: (
    ctx: RouteContext<z.output<BodySchema>, z.output<QuerySchema>, z.output<ParamsSchema>>,
  ) => Promise<unknown> | unknown;
}

/** Keeps the schema types of one route for its handler (a plain object literal loses them). */
export function route<B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType>(
  spec: RouteSpec<B, Q, P>,
): RouteSpec {
  return spec as unknown as RouteSpec;
}

/** The broker offers each operation as /broker/<x> (ID token) and /broker/private/<x> (API key), spec 4. */
export function brokerRoute<B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType>(
  spec: Omit<RouteSpec<B, Q, P>, 'path' | 'auth'> & { path: string },
): RouteSpec[] {
  if (!spec.path.startsWith('/')) throw new Error(`broker path must start with /: ${spec.path}`);
  return [
    route({ ...spec, path: `/broker${spec.path}`, auth: 'idToken' }),
    route({ ...spec, path: `/broker/private${spec.path}`, auth: 'apiKey' }),
  ];
}

/** Access rules of spec 5 and DESIGN.md by path. */
export function authModeForPath(path: string): AuthMode {
  if (path.startsWith('/broker/private/') || path.startsWith('/images/private/')) return 'apiKey';
  if (path.startsWith('/broker/') || path.startsWith('/images/')) return 'idToken';
  if (path.startsWith('/auth/')) return 'none';
  return 'either';
}
