// Channel commands between processes, as the packager sees them: the queue it claims commands from and answers into,
// and the wake-up that spares it a poll. The control plane owns the tables (src/channels/channel-command.store.ts)
// and implements both; the wiring hands them to the packager's worker.

export const CHANNEL_COMMAND_KINDS = ['start', 'stop', 'insertAdBreak', 'switchInput'] as const;
export type ChannelCommandKind = (typeof CHANNEL_COMMAND_KINDS)[number];

/** A packager beats every HEARTBEAT_MS; one silent for STALE_MS is taken for gone (killed, crashed, cut off). */
export const HEARTBEAT_MS = 2_000;
export const STALE_MS = 6_000;

/** A command a packager claimed: it runs it on its runtime and writes the outcome back. */
export interface ClaimedChannelCommand {
  id: string;
  workflowId: string;
  kind: ChannelCommandKind;
  /** JSON text (the arguments of the ChannelRuntime call) */
  payload: string;
}

export interface ChannelCommandQueue {
  /** the packager's heartbeat (api processes send commands only to packagers that beat) */
  beat(packagerId: string, publicUrl: string, now: number): Promise<void>;
  /** a packager shutting down says so: commands fail at once instead of waiting for the heartbeat to age */
  leave(packagerId: string): Promise<void>;
  /** the oldest pending command this packager may run (its own or an untargeted one), or none */
  claimNext(packagerId: string, now: number): Promise<ClaimedChannelCommand | undefined>;
  finish(commandId: string, outcome: { result: unknown } | { error: string }, now: number): Promise<void>;
  /** after a stop: the channel has no owner any more */
  releaseOwner(workflowId: string): Promise<void>;
  /** finished commands created before `before` are dropped */
  prune(before: number): Promise<void>;
}

/** Optional wake-up (Redis): a sender announces a new command and a packager an answer; the rows stay the truth. */
export interface CommandWakeup {
  /** 'new' (a command was written) or the id of a command that was answered */
  publish(message: string): void;
  subscribe(listener: (message: string) => void): () => void;
  close(): Promise<void>;
}
