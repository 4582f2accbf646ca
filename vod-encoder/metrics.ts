import { Counter, Histogram, type Registry } from 'prom-client';

/** Prometheus metrics of the worker: jobs by kind and outcome, and how long each kind takes. */
export interface WorkerMetrics {
  jobs: Counter<'kind' | 'outcome'>;
  duration: Histogram<'kind'>;
}

export function createWorkerMetrics(registry: Registry): WorkerMetrics {
  return {
    jobs: new Counter({
      name: 'engine_worker_jobs_total',
      help: 'Worker jobs finished, by kind (encode, captions, creative) and outcome (ok, failed, crashed)',
      labelNames: ['kind', 'outcome'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'engine_worker_job_duration_seconds',
      help: 'Wall time of worker jobs by kind',
      labelNames: ['kind'] as const,
      buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600],
      registers: [registry],
    }),
  };
}

/** Wraps a job handler so every run is counted and timed, whatever it returns or throws. */
export function instrumented<Args extends unknown[], Result>(
  metrics: WorkerMetrics | undefined,
  kind: string,
  handler: (...args: Args) => Promise<Result>,
): (...args: Args) => Promise<Result> {
  if (!metrics) return handler;
  return async (...args: Args) => {
    const stop = metrics.duration.startTimer({ kind });
    try {
      const result = await handler(...args);
      const ok = typeof result !== 'object' || result === null || !('ok' in result) || (result as { ok: unknown }).ok !== false;
      metrics.jobs.inc({ kind, outcome: ok ? 'ok' : 'failed' });
      return result;
    } catch (error) {
      metrics.jobs.inc({ kind, outcome: 'crashed' });
      throw error;
    } finally {
      stop();
    }
  };
}
