// The job queue between the control plane and the encode workers (DESIGN: the API talks to the encoder only
// through this interface). Two implementations: queue-db.ts (embedded default: jobs persisted in the engine's
// database, processed in this process) and queue-pgboss.ts (DATABASE_URL=postgres://…: shared by every worker).
import type { Logger } from 'pino';
import type { EncodeProgress } from './ffmpeg-runner.js';

export type JobKind = 'encode' | 'captions' | 'creative';
export const JOB_KINDS: readonly JobKind[] = ['encode', 'captions', 'creative'];

/** Higher runs first. Ad creatives block a viewer's ad break, so they jump ahead of VOD encodes. */
export const JOB_PRIORITY: Record<JobKind, number> = { creative: 20, captions: 5, encode: 0 };

/** Jobs of one kind that one worker process runs at the same time (2-core default: one heavy encode at a time). */
export const DEFAULT_CONCURRENCY: Record<JobKind, number> = { encode: 1, captions: 1, creative: 1 };

export type JobState = 'queued' | 'running' | 'done' | 'failed';

export interface JobInfo {
  id: string;
  kind: JobKind;
  state: JobState;
  priority: number;
  /** What the handler returned (JSON). */
  output?: unknown;
  /** Why the handler threw. */
  error?: string;
  progress?: EncodeProgress;
}

export interface JobContext {
  id: string;
  kind: JobKind;
  /** Aborted when the queue closes: the handler must stop and throw; the job runs again at the next start. */
  signal: AbortSignal;
  progress(p: EncodeProgress): void;
  logger: Logger;
  /**
   * Whether this run still owns the job, asked before it writes its outcome (records, status). A shared queue's lease
   * may have gone to another worker while this one was stopped or starved: the job then runs there, and this run must
   * leave the VOD to it. Absent: the run always owns its job (the embedded queue).
   */
  owned?: () => Promise<boolean>;
}

export class JobLeaseLostError extends Error {
  constructor() {
    super('the job lease went to another worker: the job runs there');
    this.name = 'JobLeaseLostError';
  }
}

/** Returns the job's output (JSON). Expected failures are data in the output; a throw is an unexpected failure. */
export type JobHandler = (payload: Record<string, unknown>, job: JobContext) => Promise<unknown>;

export interface EnqueueOptions {
  /** Defaults to JOB_PRIORITY[kind]. */
  priority?: number;
}

export interface EncodeQueue {
  readonly backend: 'database' | 'pg-boss';
  enqueue(kind: JobKind, payload: Record<string, unknown>, opts?: EnqueueOptions): Promise<string>;
  get(id: string): Promise<JobInfo | undefined>;
  /** Resolves when the job is done or failed (or rejects after timeoutMs). */
  waitFor(id: string, timeoutMs?: number): Promise<JobInfo>;
  /** Registers the handler of a kind; only processes with the worker role do. */
  handle(kind: JobKind, handler: JobHandler, concurrency?: number): void;
  /** Starts taking jobs for the registered handlers. */
  start(): Promise<void>;
  /** Stops taking jobs, aborts running handlers (their jobs run again later) and waits for them to return. */
  close(): Promise<void>;
}

export class JobCanceledError extends Error {
  constructor() {
    super('the job was canceled because the queue is closing');
    this.name = 'JobCanceledError';
  }
}
