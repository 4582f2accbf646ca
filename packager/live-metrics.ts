// Prometheus metrics of the packager (besides the per-channel graph gauges): channels running, encoder runs by kind
// (input, slate) and alarms raised by code, so a dashboard sees restarts and input losses across channels.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CHANNEL_METRICS, type ChannelMetric } from '../kernel/seams/channel-runtime.js';

export interface LiveMetrics {
  channelsRunning: Gauge;
  encoderRuns: Counter<'kind'>;
  alarms: Counter<'code'>;
  /** how long resumed channels were off air (their packager gone), from the last segment before the hole to the first after */
  outageSeconds: Histogram;
  /** latest graph sample per channel; undefined removes the channel's series */
  graph(workflowId: string, metric: ChannelMetric, value: number | undefined): void;
}

export function createLiveMetrics(registry: Registry): LiveMetrics {
  const graph = new Gauge({
    name: 'engine_live_channel_metric',
    help: `Latest graph sample of a running channel (spec 4.2.12): ${CHANNEL_METRICS.join(', ')}`,
    labelNames: ['workflow_id', 'metric'] as const,
    registers: [registry],
  });
  return {
    channelsRunning: new Gauge({ name: 'engine_live_channels_running', help: 'Channels this packager runs', registers: [registry] }),
    encoderRuns: new Counter({ name: 'engine_live_encoder_runs_total', help: 'ffmpeg runs started, by kind (input, slate)', labelNames: ['kind'] as const, registers: [registry] }),
    alarms: new Counter({ name: 'engine_live_alarms_total', help: 'Channel alarms raised, by code', labelNames: ['code'] as const, registers: [registry] }),
    outageSeconds: new Histogram({
      name: 'engine_live_outage_seconds', help: 'Seconds a resumed channel was off air (its packager gone): last segment before the hole to the first after',
      buckets: [2, 4, 6, 8, 10, 15, 20, 30, 60, 120], registers: [registry],
    }),
    graph: (workflowId, metric, value) => {
      if (value === undefined) graph.remove({ workflow_id: workflowId, metric });
      else graph.set({ workflow_id: workflowId, metric }, value);
    },
  };
}
