import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { JobLeases } from '../../../vod-encoder/job-leases.js';

for (const dialect of DIALECTS) {
  describe(`job leases on ${dialect}`, async () => {
    const skip = dialect === 'postgres' && !(await postgresAvailable());
    let engine: TestEngine;
    beforeAll(async () => {
      if (!skip) engine = await startTestEngine({ dialect, roles: 'api' });
    });
    afterAll(async () => engine?.close());

    const make = (clock: { now: number }, lost: string[]) => new JobLeases(engine.ctx.store.db, {
      ttlMs: 15_000, logger: pino({ level: 'silent' }), now: () => clock.now, onLost: async (queue, id) => { lost.push(`${queue}/${id}`); },
    });

    it.skipIf(skip)('gives back the job of a holder that stopped renewing, once, and never a renewed one', async () => {
      const clock = { now: 1_000_000 };
      const lost: string[] = [];
      const [alive, dead, sweeperA, sweeperB] = [make(clock, lost), make(clock, lost), make(clock, lost), make(clock, lost)];
      await alive.hold('job-alive', 'vod-encode');
      await dead.hold('job-dead', 'vod-encode');
      clock.now += 10_000;
      await alive.tick(); // renews job-alive; job-dead is 10 s old: not yet stale
      expect(lost).toEqual([]);
      clock.now += 10_000;
      await alive.tick();
      await Promise.all([sweeperA.tick(), sweeperB.tick()]);
      expect(lost).toEqual(['vod-encode/job-dead']);
      await alive.release('job-alive');
      clock.now += 60_000;
      await sweeperA.tick();
      expect(lost).toEqual(['vod-encode/job-dead']);
    });

    it.skipIf(skip)('stops renewing the lease of a job it no longer runs, left by a release that failed, so the job is given back', async () => {
      const clock = { now: 2_000_000 };
      const lost: string[] = [];
      const [worker, sweeper] = [make(clock, lost), make(clock, lost)];
      await worker.hold('job-running', 'vod-encode');
      // the row a release leaves behind when the database was away as the job ended (issue 27)
      await engine.ctx.store.db.insertInto('job_leases').values({ job_id: 'job-ended', queue: 'vod-encode', holder: worker.holder, renewed_at: clock.now }).execute();
      for (let i = 0; i < 4; i++) {
        clock.now += 6_000;
        await worker.tick();
        await sweeper.tick();
      }
      expect(lost).toEqual(['vod-encode/job-ended']);
      await worker.release('job-running');
    });

    it.skipIf(skip)('tells a holder too slow to renew that its job went to another, and only then (issue 32: a stopped worker resumed)', async () => {
      const clock = { now: 3_000_000 };
      const lost: string[] = [];
      const [slow, other] = [make(clock, lost), make(clock, lost)];
      const revoked: string[] = [];
      await slow.hold('job-slow', 'vod-encode', () => revoked.push('job-slow'));
      await slow.hold('job-fine', 'vod-encode', () => revoked.push('job-fine'));
      clock.now += 10_000;
      await slow.tick(); // renewed in time: nothing revoked
      expect(revoked).toEqual([]);
      expect(await slow.holds('job-slow')).toBe(true);
      // stopped past the TTL: the other gives the jobs back and leases one of them again (pg-boss retries it there)
      clock.now += 20_000;
      await other.tick();
      expect(lost.sort()).toEqual(['vod-encode/job-fine', 'vod-encode/job-slow']);
      await other.hold('job-slow', 'vod-encode');
      expect(await slow.holds('job-slow')).toBe(false);
      await slow.tick();
      expect(revoked.sort()).toEqual(['job-fine', 'job-slow']);
      // told once; the other's lease is untouched by the slow one's renewals and release
      await slow.tick();
      await slow.release('job-slow');
      expect(revoked).toHaveLength(2);
      expect(await other.holds('job-slow')).toBe(true);
      await other.release('job-slow');
    });

    it.skipIf(skip)('takes the lease of a job handed over as the database went away once it is back, and revokes nothing meanwhile (issue 27)', async () => {
      const clock = { now: 4_000_000 };
      const db = engine.ctx.store.db;
      // the database away for the first two inserts of the lease (a restart under way when pg-boss handed the job over)
      let failing = 2;
      const away = new Proxy(db, {
        get(target, prop, receiver) {
          if (prop === 'insertInto' && failing > 0) {
            failing--;
            return () => { throw new Error('Connection terminated unexpectedly'); };
          }
          const value: unknown = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const lost: string[] = [];
      const worker = new JobLeases(away, { ttlMs: 15_000, logger: pino({ level: 'silent' }), now: () => clock.now, onLost: async (queue, id) => { lost.push(`${queue}/${id}`); } });
      const revoked: string[] = [];
      // a renewal pass while the insert fails finds no lease of this job: it must not take the job for revoked
      let taken = false;
      const holding = worker.holdOnceBack('job-across', 'vod-encode', () => revoked.push('job-across'), () => false, 5)
        .then(() => { taken = true; });
      await worker.tick();
      expect(revoked).toEqual([]);
      await holding;
      expect(taken).toBe(true);
      expect(failing).toBe(0);
      expect(await worker.holds('job-across')).toBe(true);
      clock.now += 6_000;
      await worker.tick();
      expect(revoked).toEqual([]);
      expect(lost).toEqual([]);
      // a queue closing stops the retries: the error comes back
      failing = 1;
      await expect(worker.holdOnceBack('job-closing', 'vod-encode', () => undefined, () => true, 5)).rejects.toThrow(/Connection terminated/);
      await worker.release('job-across');
    });
  });
}
