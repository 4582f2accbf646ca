import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per engine instance, so tests can start several engines in one process. */
export interface EngineMetrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
}

export function createMetrics(collectDefaults = true): EngineMetrics {
  const registry = new Registry();
  if (collectDefaults) collectDefaultMetrics({ register: registry });
  const httpRequests = new Counter({
    name: 'engine_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'engine_http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return { registry, httpRequests, httpDuration };
}
