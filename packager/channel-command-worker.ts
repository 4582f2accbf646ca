// The packager side of channel commands (the queue of kernel/seams/channel-commands.ts, kept by the control plane in
// src/channels/channel-command.store.ts): heartbeats so api processes see it alive, claims the commands it may run (untargeted starts, and everything aimed at channels it runs), runs them on
// this process's runtime and writes the answer back. Commands of different channels run side by side: a start waits
// for its first segment and must not hold up another channel's stop.
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Counter } from 'prom-client';
import type { Clock } from '../kernel/core/clock.js';
import type { Logger } from '../kernel/core/logger.js';
import type { AdBreak, ChannelRuntime, ChannelSpec } from '../kernel/seams/channel-runtime.js';
import { isDatabaseUnavailable } from '../kernel/store/outage.js';
import { HEARTBEAT_MS, type ChannelCommandQueue, type ClaimedChannelCommand, type CommandWakeup } from '../kernel/seams/channel-commands.js';

export interface ChannelCommandWorkerOptions {
  /** where commands come from and answers go (the shared database's channel_commands) */
  queue: ChannelCommandQueue;
  runtime: ChannelRuntime;
  /** wall time: heartbeats are compared across processes */
  clock: Clock;
  logger: Logger;
  publicUrl: () => string;
  /** commands run, by kind and outcome (done, failed) */
  commands?: Counter<'kind' | 'outcome'>;
  pollMs?: number;
  id?: string;
  /** Redis wake-up: new commands are claimed before the next poll, answers announced */
  wakeup?: CommandWakeup;
}

const DAY_MS = 24 * 3600_000;
/** while the database is away a failed claim is logged this often, not at every poll (4 a second) */
const OUTAGE_LOG_INTERVAL_MS = 30_000;

export class ChannelCommandWorker {
  readonly id: string;
  private readonly inFlight = new Set<Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private polling = false;
  /** when a claim that failed for a database outage was last logged; 0 once claims work again */
  private outageLoggedAt = 0;
  private unsubscribe: (() => void) | undefined;
  private closed = false;

  constructor(private readonly options: ChannelCommandWorkerOptions) {
    this.id = options.id ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  }

  async start(): Promise<void> {
    await this.beat();
    const heart = setInterval(() => void this.beat(), HEARTBEAT_MS);
    const poll = setInterval(() => void this.poll(), this.options.pollMs ?? 250);
    const prune = setInterval(() => void this.options.queue.prune(this.options.clock.nowMs() - DAY_MS).catch(() => undefined), 3600_000);
    this.timers = [heart, poll, prune];
    for (const timer of this.timers) timer.unref();
    this.unsubscribe = this.options.wakeup?.subscribe((message) => {
      if (message === 'new') void this.poll();
    });
    this.options.logger.info({ packager: this.id }, 'packager takes channel commands');
  }

  private async beat(): Promise<void> {
    if (this.closed) return;
    await this.options.queue.beat(this.id, this.options.publicUrl(), this.options.clock.nowMs()).catch((error: unknown) =>
      this.options.logger.warn({ err: error }, 'the packager heartbeat could not be written'));
  }

  /** Claims until nothing is left; each claimed command runs on its own. */
  async poll(): Promise<void> {
    if (this.polling || this.closed) return;
    this.polling = true;
    try {
      for (;;) {
        const command = await this.options.queue.claimNext(this.id, this.options.clock.nowMs());
        this.outageLoggedAt = 0;
        if (!command) return;
        const run = this.run(command);
        this.inFlight.add(run);
        void run.finally(() => this.inFlight.delete(run));
      }
    } catch (error) {
      if (!this.closed && this.shouldLogClaimFailure(error)) this.options.logger.warn({ err: error }, 'channel commands could not be claimed');
    } finally {
      this.polling = false;
    }
  }

  private shouldLogClaimFailure(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return true;
    const now = Date.now();
    if (now - this.outageLoggedAt < OUTAGE_LOG_INTERVAL_MS) return false;
    this.outageLoggedAt = now;
    return true;
  }

  private async run(command: ClaimedChannelCommand): Promise<void> {
    const log = this.options.logger.child({ workflowId: command.workflowId, command: command.kind, commandId: command.id });
    let outcome: { result: unknown } | { error: string };
    try {
      outcome = { result: await this.dispatch(command) };
      if (command.kind === 'stop') await this.options.queue.releaseOwner(command.workflowId);
      log.info('channel command done');
    } catch (error) {
      outcome = { error: (error instanceof Error ? error.message : String(error)).slice(0, 1000) };
      log.warn({ err: error }, 'channel command failed');
    }
    this.options.commands?.inc({ kind: command.kind, outcome: 'error' in outcome ? 'failed' : 'done' });
    await this.options.queue.finish(command.id, outcome, this.options.clock.nowMs()).then(
      () => this.options.wakeup?.publish(command.id),
      (error: unknown) => log.error({ err: error }, 'the answer of a channel command could not be written'),
    );
  }

  private dispatch(command: ClaimedChannelCommand): Promise<unknown> {
    const { runtime } = this.options;
    const payload = JSON.parse(command.payload) as unknown;
    switch (command.kind) {
      case 'start':
        return runtime.start(payload as ChannelSpec);
      case 'stop':
        return runtime.stop(command.workflowId);
      case 'insertAdBreak':
        return runtime.insertAdBreak(command.workflowId, payload as AdBreak);
      case 'switchInput':
        return runtime.switchInput(command.workflowId, (payload as { input: string }).input);
    }
  }

  /** In-flight commands (tests). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stops taking commands and leaves at once, so senders fail fast instead of waiting for the heartbeat to age. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    for (const timer of this.timers) clearInterval(timer);
    await this.options.queue.leave(this.id).catch(() => undefined);
  }
}
