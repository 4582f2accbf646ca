// The ChannelRuntime of a process without the packager role (DESIGN.md "Processes and scale"): every call becomes a
// command row that a packager process runs (packager/channel-command-worker.ts); this side waits for its result. A
// call fails at once, with the reason, when no packager (or not the one running the channel) is alive. After a
// restart of this process, a start it had sent and a live packager still runs is waited for again (heldStart).
import type { Counter } from 'prom-client';
import type { Clock } from '../../kernel/core/clock.js';
import type { Logger } from '../../kernel/core/logger.js';
import type { Db } from '../../kernel/store/database.js';
import type { AdBreak, ChannelEndpoints, ChannelRuntime, ChannelSpec, HeldStart } from '../../kernel/seams/channel-runtime.js';
import type { CommandWakeup } from '../../kernel/seams/channel-commands.js';
import { cancel, enqueue, lastStartCommand, livePackagers, ownerOf, readCommand, releaseOwner, STALE_MS, type ChannelCommandKind } from './channel-command.store.js';

export const NO_PACKAGER_REASON =
  `no packager process is alive (none sent a heartbeat in the last ${STALE_MS / 1000} s): start an engine with the packager role on this database`;

export interface RemoteChannelRuntimeOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** commands sent, by kind and outcome (done, failed, unavailable, timeout) */
  commands?: Counter<'kind' | 'outcome'>;
  pollMs?: number;
  /** how long a start or stop may take on the packager (first segment, archive merge) */
  longDeadlineMs?: number;
  /** how long an ad break or input switch may take */
  shortDeadlineMs?: number;
  /** Redis wake-up: answers arrive before the next poll */
  wakeup?: CommandWakeup;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RemoteChannelRuntime implements ChannelRuntime {
  private readonly pollMs: number;
  private readonly longDeadlineMs: number;
  private readonly shortDeadlineMs: number;

  constructor(private readonly options: RemoteChannelRuntimeOptions) {
    this.pollMs = options.pollMs ?? 200;
    this.longDeadlineMs = options.longDeadlineMs ?? 150_000;
    this.shortDeadlineMs = options.shortDeadlineMs ?? 30_000;
  }

  async start(spec: ChannelSpec): Promise<ChannelEndpoints> {
    return (await this.call('start', spec.workflowId, spec, null, this.longDeadlineMs)) as ChannelEndpoints;
  }

  /**
   * The start command of `workflowId` sent before this process restarted, when a live packager may still answer it:
   * pending while a packager is alive, running on a live packager, or answered meanwhile. A pending one no packager
   * can take any more is withdrawn; one running on a packager that is gone is not held (its encoder went with it).
   */
  async heldStart(workflowId: string): Promise<HeldStart | undefined> {
    const { db, clock } = this.options;
    const command = await lastStartCommand(db, workflowId);
    if (!command) return undefined;
    const now = clock.nowMs();
    const live = await livePackagers(db, now);
    if (command.status === 'pending' && live.length === 0) {
      await cancel(db, command.id, NO_PACKAGER_REASON, now);
      return undefined;
    }
    if (command.status === 'running' && !(command.claimed_by && live.includes(command.claimed_by))) return undefined;
    this.options.logger.info({ workflowId, commandId: command.id, status: command.status }, 'waiting again for a start sent before the restart');
    // the deadline runs from when the start was sent, as it did for the sender before the restart
    return { result: async () => (await this.answer(command.id, 'start', null, command.created_at + this.longDeadlineMs)) as ChannelEndpoints };
  }

  async stop(workflowId: string): Promise<{ archiveUrl?: string }> {
    const owner = await ownerOf(this.options.db, workflowId);
    // never started anywhere (or already stopped): nothing to undo
    if (!owner) return {};
    const live = await livePackagers(this.options.db, this.options.clock.nowMs());
    if (!live.includes(owner)) {
      // Its packager is gone and its encoder with it; a packager that comes back stops what is no longer RUNNING.
      this.options.logger.warn({ workflowId, packager: owner }, 'the packager of a stopped channel is gone: nothing left to stop');
      await releaseOwner(this.options.db, workflowId);
      this.options.commands?.inc({ kind: 'stop', outcome: 'unavailable' });
      return {};
    }
    return ((await this.call('stop', workflowId, null, owner, this.longDeadlineMs)) ?? {}) as { archiveUrl?: string };
  }

  async insertAdBreak(workflowId: string, adBreak: AdBreak): Promise<void | { startsAt: number }> {
    const placed = await this.call('insertAdBreak', workflowId, adBreak, await this.ownerOrFail(workflowId, 'insertAdBreak'), this.shortDeadlineMs);
    return (placed ?? undefined) as void | { startsAt: number };
  }

  async switchInput(workflowId: string, input: string): Promise<void> {
    await this.call('switchInput', workflowId, { input }, await this.ownerOrFail(workflowId, 'switchInput'), this.shortDeadlineMs);
  }

  private async ownerOrFail(workflowId: string, kind: ChannelCommandKind): Promise<string> {
    const owner = await ownerOf(this.options.db, workflowId);
    if (owner) return owner;
    this.options.commands?.inc({ kind, outcome: 'unavailable' });
    throw new Error(`the channel of workflow ${workflowId} runs on no packager process`);
  }

  /** Waits one poll interval, or less when the wake-up says this command was answered. */
  private answerOrPoll(id: string): Promise<void> {
    const wakeup = this.options.wakeup;
    if (!wakeup) return sleep(this.pollMs);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      };
      const timer = setTimeout(done, this.pollMs);
      const unsubscribe = wakeup.subscribe((message) => {
        if (message === id) done();
      });
    });
  }

  private unavailable(target: string | null): string {
    return target ? `the packager process ${target} that runs this channel is gone (no heartbeat in the last ${STALE_MS / 1000} s)` : NO_PACKAGER_REASON;
  }

  /** Writes the command and polls its row until a packager answered, the packager is gone, or the deadline passed. */
  private async call(kind: ChannelCommandKind, workflowId: string, payload: unknown, target: string | null, deadlineMs: number): Promise<unknown> {
    const { db, clock } = this.options;
    if (!reachable(await livePackagers(db, clock.nowMs()), target)) {
      this.options.commands?.inc({ kind, outcome: 'unavailable' });
      throw new Error(this.unavailable(target));
    }
    const id = await enqueue(db, { workflowId, kind, payload, target }, clock.nowMs());
    this.options.wakeup?.publish('new');
    const deadline = clock.nowMs() + deadlineMs;
    await this.answerOrPoll(id);
    return this.answer(id, kind, target, deadline);
  }

  /** Polls command `id` until a packager answered it, the packager is gone, or `deadline` passed. */
  private async answer(id: string, kind: ChannelCommandKind, target: string | null, deadline: number): Promise<unknown> {
    const { db, clock } = this.options;
    const count = (outcome: string) => this.options.commands?.inc({ kind, outcome });
    for (;;) {
      const row = await readCommand(db, id);
      if (!row) throw new Error(`channel command ${id} vanished`);
      if (row.status === 'done') {
        count('done');
        return row.result === null ? undefined : (JSON.parse(row.result) as unknown);
      }
      if (row.status === 'failed') {
        count('failed');
        throw new Error(row.error ?? `the packager failed the ${kind} command`);
      }
      const now = clock.nowMs();
      const live = await livePackagers(db, now);
      if (row.status === 'pending' && !reachable(live, target) && (await cancel(db, id, this.unavailable(target), now))) {
        count('unavailable');
        throw new Error(this.unavailable(target));
      }
      if (row.status === 'running' && row.claimed_by && !live.includes(row.claimed_by)) {
        count('unavailable');
        throw new Error(`the packager process ${row.claimed_by} stopped answering while it ran the ${kind} command`);
      }
      if (now > deadline) {
        await cancel(db, id, 'the sender gave up waiting', now);
        count('timeout');
        throw new Error(`no packager answered the ${kind} command within ${Math.round((deadline - row.created_at) / 1000)} s`);
      }
      await this.answerOrPoll(id);
    }
  }
}

/** Whether a command for `target` (a packager id; null: any packager) can be run by one of the `live` packagers. */
function reachable(live: readonly string[], target: string | null): boolean {
  return target ? live.includes(target) : live.length > 0;
}
