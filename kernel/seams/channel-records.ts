// What a packager reads and prunes of the control plane's channel records: its recovery after a restart and its
// takeover of channels whose packager is gone need them. The control plane owns the tables (workflows, channel_owners,
// packager_processes, channel_metrics) and implements this seam in src/channels/channel-records.ts; the wiring passes it.

export interface ChannelRecords {
  /** ids of the workflows whose channel the control plane has RUNNING */
  runningWorkflowIds(): Promise<string[]>;
  /** a workflow's name (the title of its archive); undefined when it is gone */
  workflowName(workflowId: string): Promise<string | undefined>;
  /** among `workflowIds`, the channels whose owner packager beat at or after `beatSince` (epoch ms, wall time) */
  ownedByBeatingPackagers(workflowIds: readonly string[], beatSince: number): Promise<string[]>;
  /** ids of the packagers that beat within STALE_MS of `now` (wall time) */
  livePackagers(now: number): Promise<string[]>;
  /** drops the channel metric samples taken before `before` */
  pruneMetrics(before: number): Promise<void>;
}
