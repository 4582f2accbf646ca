// Keeps a channel's one ffmpeg running (issue 18, lifecycle): a crash restarts the input with backoff and raises
// ENCODER_RESTARTED; a lost input (ffmpeg ends, or stalls) puts the slate on air and raises INPUT_LOSS while the input
// is probed with backoff; both alarms clear when the input produces segments again. One run at a time.
import type { Logger } from '../../kernel/core/logger.js';
import type { EncoderPlan } from './encoder-plan.js';
import { EncoderRun, type FinishedSegment } from './encoder-run.js';
import { execTool } from '../../media/exec-tool.js';
import type { FfmpegExit, ProgressSample } from '../../media/ffmpeg-process.js';
import type { RunInput } from './ffmpeg-args.js';
import { isDiskFull, volumeFull } from '../../kernel/core/disk-full.js';

/** Where the encoder reads from: the active input's ffmpeg arguments; pull inputs can be probed for a retry. */
export interface EncoderSource {
  name: string;
  args(): string[];
  /** pull inputs: probed for a return after a loss; push inputs report their sender instead (inputConnected) */
  probe: boolean;
  /**
   * UDP push inputs (SRT, RIST, RTP): the encoder itself is the listener the front relays to (an SRT sender is only
   * accepted once it answers), so it waits for a sender instead of the slate, and the output pauses while none pushes.
   */
  listens?: boolean;
  /** push inputs: the front hands over what its sender sent and ends the input, at a graceful stop (IngestFront.drain) */
  drain?: () => Promise<void>;
}

export type SupervisorAlarm = 'INPUT_LOSS' | 'ENCODER_RESTARTED' | 'DISK_FULL';

export type SupervisorEvent =
  | { type: 'segment'; segment: FinishedSegment; kind: RunInput['kind'] }
  | { type: 'alarm'; code: SupervisorAlarm; message: string; severity: 'WARNING' | 'CRITICAL'; active: boolean }
  /** a run ended before the channel ever produced a segment: the start fails with this reason */
  | { type: 'start-failed'; reason: string }
  /** even the slate cannot run: the channel failed */
  | { type: 'failed'; reason: string }
  | { type: 'progress'; sample: ProgressSample; kind: RunInput['kind'] }
  /** a new ffmpeg run went on air (its counters start over) */
  | { type: 'run'; kind: RunInput['kind']; prefix: string };

export interface SupervisorOptions {
  ffmpegPath: string;
  plan: EncoderPlan;
  publicDir: string;
  workDir: string;
  /** first run number (a resumed channel continues its numbering so file names never repeat) */
  firstRun: number;
  logger: Logger;
  onEvent(event: SupervisorEvent): void;
}

const STANDBY_HEADROOM_SEC = 3600;
// asked to finish, the slate (generated picture and silence) closes its segment within milliseconds; killed after this
const SLATE_FINISH_MS = 1500;
// an encoder behind real time on a busy machine catches up on its drained input within this (measured: ≤ 1.5 s)
const DRAIN_MS = 5000;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
const BACKOFF_MS = [1000, 2000, 4000, 8000, 15_000, 30_000];
const backoff = (attempt: number): number => BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!;
// a full data directory: the same run is tried again this often (cheap: it fails at its first segment) until space returns
const DISK_FULL_RETRY_MS = 3000;

export const describeExit = (exit: FfmpegExit): string =>
  `ffmpeg ${exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`}${exit.stderrTail ? `: ${exit.stderrTail.split('\n').slice(-3).join(' | ')}` : ''}`;

export class EncoderSupervisor {
  private run: EncoderRun | undefined;
  /** the slate finishing the segment it was writing when the next run was asked for: that segment still goes on air */
  private leaving: EncoderRun | undefined;
  /** a listener waiting for its sender while the slate is on air; it goes on air with its first segment */
  private standby: EncoderRun | undefined;
  /** the highest timestamp (s) a run on air has written: the next run starts after it */
  private highWater = 0;
  private runNumber: number;
  private source: EncoderSource | undefined;
  private everProduced = false;
  private stopped = false;
  private failures = 0;
  private readonly active = new Set<SupervisorAlarm>();
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly watchdog: NodeJS.Timeout;
  private watchdogKilled = new WeakSet<EncoderRun>();
  private switching: Promise<void> = Promise.resolve();

  constructor(private readonly options: SupervisorOptions) {
    this.runNumber = options.firstRun;
    this.watchdog = setInterval(() => this.checkStall(), 1000);
  }

  get runsStarted(): number {
    return this.runNumber;
  }

  get onAir(): RunInput['kind'] | undefined {
    return this.run?.kind;
  }

  get pid(): number | undefined {
    return this.run?.process.pid;
  }

  /** When the run on air was spawned (epoch ms): the benchmark's origin of input time. */
  get runStartedAt(): number | undefined {
    return this.run?.startedAt;
  }

  /** Puts this source on air now (start, input switch, sender connected). */
  useSource(source: EncoderSource): Promise<void> {
    this.dropStandby(source);
    this.source = source;
    this.failures = 0;
    return this.replace({ kind: 'input', args: source.args() });
  }

  /** The slate until a source is given or reports its sender (push inputs before the first connection). */
  useSlate(): Promise<void> {
    return this.replace({ kind: 'slate' });
  }

  /** A push input: its sender goes on air when the front reports it (inputConnected); the slate runs until then. */
  expectSource(source: EncoderSource): void {
    this.dropStandby(source);
    this.source = source;
    this.failures = 0;
  }

  /** A push front accepted a sender: its signal goes on air. */
  inputConnected(source: EncoderSource): void {
    if (this.stopped || source !== this.source) return;
    if (this.run?.kind !== 'input') void this.replace({ kind: 'input', args: source.args() });
  }

  /** Ends the encoder; `graceful` lets it finish the segment in progress (the archive keeps it). */
  async stop(graceful = false): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    clearTimeout(this.retryTimer);
    await this.switching.catch(() => undefined);
    const standby = this.standby;
    this.standby = undefined;
    await standby?.kill();
    const run = this.run;
    if (graceful && run?.kind === 'input' && this.source?.drain) {
      // the sender's last seconds are still on their way (front, listener, the encoder's interleaving): read to the
      // end of the input, the run ends by itself with them; one that does not in time is asked to finish
      await Promise.race([this.source.drain().then(() => run.exited), delay(DRAIN_MS)]).catch((error: unknown) => {
        this.options.logger.warn({ run: run.prefix, error: String(error) }, 'draining the input failed');
      });
    }
    if (graceful) await run?.finish();
    else await run?.kill();
    this.run = undefined;
  }

  /** Ends the current run (for the fault tests and the stall watchdog); the loss/crash handling follows. */
  killCurrent(): void {
    if (this.run) void this.run.kill();
  }

  // a run's timestamps start after everything already written (half a second of margin for audio priming)
  private nextOffset(): number {
    return this.highWater > 0 ? this.highWater + 0.5 : 0;
  }

  private spawn(input: RunInput, tsOffsetSec: number): EncoderRun {
    this.runNumber += 1;
    const run: EncoderRun = new EncoderRun({
      ffmpegPath: this.options.ffmpegPath, plan: this.options.plan, input, tsOffsetSec,
      paths: { publicDir: this.options.publicDir, workDir: this.options.workDir, prefix: `r${this.runNumber}` },
      onSegment: (segment) => this.onSegment(run, segment),
      onProgress: (sample) => { if (run === this.run) this.options.onEvent({ type: 'progress', sample, kind: input.kind }); },
    });
    return run;
  }

  /**
   * The slate on air and, behind it, the input's listener (UDP push): the listener goes on air with its first segment.
   * Its timestamps start an hour ahead, so the switch never sends them backwards while the slate runs meanwhile.
   */
  async useSlateAndListen(source: EncoderSource): Promise<void> {
    this.dropStandby(source);
    this.source = source;
    this.failures = 0;
    if (this.run?.kind !== 'slate') await this.useSlate();
    this.listen();
  }

  /** A listener waits for the previous source's sender: not needed once another source is chosen. */
  private dropStandby(next: EncoderSource): void {
    if (next === this.source || !this.standby) return;
    const standby = this.standby;
    this.standby = undefined;
    void standby.kill();
  }

  private listen(): void {
    const source = this.source;
    if (this.stopped || !source?.listens || this.standby) return;
    const standby = this.spawn({ kind: 'input', args: source.args() }, this.nextOffset() + STANDBY_HEADROOM_SEC);
    this.standby = standby;
    this.options.logger.info({ run: standby.prefix, pid: standby.process.pid }, 'listening for the sender behind the slate');
    void standby.exited.then((exit) => {
      if (standby !== this.standby || this.stopped) return;
      this.standby = undefined;
      this.options.logger.warn({ run: standby.prefix, reason: describeExit(exit) }, 'the listener ended; listening again');
      this.retryTimer = setTimeout(() => this.listen(), 1000);
    });
  }

  private promote(standby: EncoderRun): void {
    const slate = this.run;
    this.standby = undefined;
    this.run = standby;
    this.options.onEvent({ type: 'run', kind: 'input', prefix: standby.prefix });
    void standby.exited.then((exit) => this.onExit(standby, exit));
    void slate?.kill();
  }

  private replace(input: RunInput): Promise<void> {
    clearTimeout(this.retryTimer);
    this.switching = this.switching.catch(() => undefined).then(async () => {
      if (this.stopped) return;
      const previous = this.run;
      this.run = undefined;
      await this.takeOffAir(previous);
      if (this.stopped) return;
      const run = this.spawn(input, this.nextOffset());
      this.run = run;
      this.options.onEvent({ type: 'run', kind: input.kind, prefix: run.prefix });
      this.options.logger.info({ run: run.prefix, kind: input.kind, pid: run.process.pid }, 'encoder run started');
      void run.exited.then((exit) => this.onExit(run, exit));
    });
    return this.switching;
  }

  /**
   * Ends the run on air before the next one starts. The slate finishes its segment in progress (up to a segment of
   * picture the channel would otherwise lose, live and in its archive, when a push sender connects); an input's run is
   * killed (it may be stuck on its source, and a switch should not wait for it).
   */
  private async takeOffAir(run: EncoderRun | undefined): Promise<void> {
    if (run?.kind !== 'slate') {
      await run?.kill();
      return;
    }
    this.leaving = run;
    try {
      await run.finish(SLATE_FINISH_MS);
    } finally {
      this.leaving = undefined;
    }
  }

  private onSegment(run: EncoderRun, segment: FinishedSegment): void {
    if (run === this.standby && !this.stopped) this.promote(run);
    // a run being finished (at stop, or the slate going off air) still delivers its last segment
    if (run !== this.run && run !== this.leaving) return;
    if (segment.renditionId === this.options.plan.renditions[0]?.id) this.highWater = Math.max(this.highWater, run.tsOffsetSec + run.produced);
    this.everProduced = true;
    if (this.active.has('DISK_FULL')) this.alarm('DISK_FULL', false, 'the encoder writes segments again');
    if (run.kind === 'input' && segment.renditionId === this.options.plan.renditions[0]?.id) {
      this.failures = 0;
      for (const code of [...this.active]) this.alarm(code, false, 'the input produces segments again');
    }
    this.options.onEvent({ type: 'segment', segment, kind: run.kind });
  }

  private alarm(code: SupervisorAlarm, active: boolean, message: string): void {
    if (active === this.active.has(code)) return;
    if (active) this.active.add(code);
    else this.active.delete(code);
    this.options.onEvent({ type: 'alarm', code, message, severity: code === 'ENCODER_RESTARTED' ? 'WARNING' : 'CRITICAL', active });
  }

  private onExit(run: EncoderRun, exit: FfmpegExit): void {
    if (run !== this.run || this.stopped) return; // replaced or stopped on purpose
    this.run = undefined;
    const reason = describeExit(exit);
    this.options.logger.warn({ run: run.prefix, kind: run.kind, code: exit.code, signal: exit.signal, stderr: exit.stderrTail }, 'encoder run ended');
    if (!this.everProduced) {
      const stalled = this.watchdogKilled.has(run);
      this.options.onEvent({ type: 'start-failed', reason: stalled ? 'the input delivered no media in time' : reason });
      return;
    }
    this.failures += 1;
    if (isDiskFull({ message: `${reason} ${exit.stderrTail ?? ''}` }) || volumeFull(this.options.publicDir)) {
      // not the input's fault, and the slate would fail the same way: the same run again until space returns, the
      // channel neither failed nor put on the slate (issue 32)
      const why = this.watchdogKilled.has(run) ? 'it stalled writing on the full volume' : reason;
      this.alarm('DISK_FULL', true, `the data directory is full: the encoder cannot write the channel's segments (${why})`);
      const source = this.source;
      const again = run.kind === 'input' && source ? () => this.replace({ kind: 'input', args: source.args() }) : () => this.useSlate();
      this.retryTimer = setTimeout(() => void again(), DISK_FULL_RETRY_MS);
      return;
    }
    if (run.kind === 'slate') {
      if (this.failures > 5) {
        this.options.onEvent({ type: 'failed', reason: `the slate cannot run: ${reason}` });
        return;
      }
      this.retryTimer = setTimeout(() => void this.useSlate(), backoff(this.failures));
      return;
    }
    const crashed = exit.signal !== null && !this.watchdogKilled.has(run) && run.segments > 0;
    if (crashed) {
      // a killed encoder with a healthy input: restart the same input after a backoff
      this.alarm('ENCODER_RESTARTED', true, `${reason}; restarting`);
      const source = this.source;
      this.retryTimer = setTimeout(() => { if (source) void this.replace({ kind: 'input', args: source.args() }); }, backoff(this.failures - 1));
      return;
    }
    this.alarm('INPUT_LOSS', true, this.watchdogKilled.has(run) ? 'the input stopped delivering media' : `the input was lost: ${reason}`);
    const source = this.source;
    if (source?.listens) {
      // the slate, and a new listener behind it for the sender's return
      void this.useSlate().then(() => this.listen());
      return;
    }
    void this.useSlate().then(() => this.scheduleProbe());
  }

  /** Pull inputs: try the source with a short ffmpeg read; on success it goes back on air. */
  private scheduleProbe(): void {
    const source = this.source;
    if (this.stopped || !source?.probe) return;
    this.retryTimer = setTimeout(() => {
      const args = ['-hide_banner', '-nostdin', '-loglevel', 'error', ...source.args(), '-frames:v', '1', '-f', 'null', '-'];
      void execTool(this.options.ffmpegPath, args, 15_000).then(({ exitCode }) => {
        if (this.stopped || source !== this.source || this.run?.kind === 'input') return;
        if (exitCode !== 0) {
          this.failures += 1;
          this.scheduleProbe();
        } else void this.replace({ kind: 'input', args: source.args() });
      });
    }, backoff(this.failures));
  }

  /** No segment for three segment lengths (plus start-up time) means a stuck input: end the run. */
  private checkStall(): void {
    const run = this.run;
    if (!run || this.stopped) return;
    const seg = this.options.plan.hls.segmentSeconds * 1000;
    const since = run.segments > 0 ? run.lastSegmentAt : run.startedAt;
    const limit = run.segments > 0 ? 3 * seg + 5000 : 2 * seg + 20_000;
    if (Date.now() - since > limit) {
      this.options.logger.warn({ run: run.prefix }, 'encoder run stalled: killing it');
      this.watchdogKilled.add(run);
      void run.kill();
    }
  }
}
