import { type LogChunk, NotFoundError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { later, newJob } from './fixtures.js';
import { type OpenStoreHarness, rejectionOf, useStoreSuite } from './harness.js';

export function describeLogStoreConformance(open: OpenStoreHarness): void {
  describe('LogStore', () => {
    const suite = useStoreSuite(open);

    it('stores a chunk and gives it an integer id, every field intact', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const when = later();
      const text = 'Plan: 3 to add, 0 to change.\n\u001b[32m✓ done\u001b[0m\n';
      const chunk = await suite.asOwner(owner.id, (stores) =>
        stores.logs.append(owner.id, job.id, text, 'STDOUT', when),
      );
      expect(Number.isSafeInteger(chunk.id)).toBe(true);
      expect(chunk).toEqual({ id: chunk.id, job_id: job.id, log_chunk: text, stream_type: 'STDOUT', created_at: when });
      expect(await suite.asOwner(owner.id, (stores) => stores.logs.list(owner.id, job.id, 0, 10))).toEqual([chunk]);
    });

    it('keeps a 1 MiB chunk whole', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const big = 'ü'.repeat(512 * 1024);
      await suite.asOwner(owner.id, (stores) => stores.logs.append(owner.id, job.id, big, 'STDERR', later()));
      const [stored] = await suite.asOwner(owner.id, (stores) => stores.logs.list(owner.id, job.id, 0, 1));
      expect(stored?.log_chunk === big).toBe(true);
    });

    it('gives ids that only increase, across jobs, and pages by after and limit in id order', async () => {
      const owner = await suite.seedOwner();
      const job1 = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const job2 = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, null)));
      const streams = ['STDOUT', 'STDERR', 'SYSTEM'] as const;
      const chunks: LogChunk[] = [];
      for (let i = 0; i < 6; i += 1) {
        const jobId = i % 2 === 0 ? job1.id : job2.id;
        chunks.push(
          await suite.asOwner(owner.id, (stores) =>
            stores.logs.append(owner.id, jobId, `line ${i}\n`, streams[i % 3] ?? 'STDOUT', later()),
          ),
        );
      }
      const ids = chunks.map((chunk) => chunk.id);
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
      expect(new Set(ids).size).toBe(ids.length);

      const list = (after: number, limit: number) =>
        suite.asOwner(owner.id, (stores) => stores.logs.list(owner.id, job1.id, after, limit));
      const ofJob1 = chunks.filter((chunk) => chunk.job_id === job1.id);
      expect(await list(0, 100)).toEqual(ofJob1);
      expect(ofJob1.map((chunk) => [chunk.log_chunk, chunk.stream_type])).toEqual([
        ['line 0\n', 'STDOUT'],
        ['line 2\n', 'SYSTEM'],
        ['line 4\n', 'STDERR'],
      ]);
      const [first, second, third] = ofJob1 as [LogChunk, LogChunk, LogChunk];
      expect(await list(first.id, 1)).toEqual([second]);
      expect(await list(second.id, 10)).toEqual([third]);
      expect(await list(first.id - 1, 2)).toEqual([first, second]);
      expect(await list(third.id, 10)).toEqual([]);
    });

    it('gives distinct, increasing ids to concurrent appends', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const chunks = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          suite.asOwner(owner.id, (stores) => stores.logs.append(owner.id, job.id, `c${i}`, 'STDOUT', later())),
        ),
      );
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(10);
      const listed = await suite.asOwner(owner.id, (stores) => stores.logs.list(owner.id, job.id, 0, 100));
      expect(listed.map((chunk) => chunk.id)).toEqual(chunks.map((chunk) => chunk.id).sort((x, y) => x - y));
    });

    it("never shows one owner's logs to another, nor lets another append to its jobs", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const job = await suite.asOwner(a.id, (stores) => stores.jobs.create(newJob(a.id, a.vine)));
      const chunk = await suite.asOwner(a.id, (stores) => stores.logs.append(a.id, job.id, 'mine', 'STDOUT', later()));
      expect(await suite.asOwner(b.id, (stores) => stores.logs.list(b.id, job.id, 0, 10))).toEqual([]);
      const error = await rejectionOf(
        suite.asOwner(b.id, (stores) => stores.logs.append(b.id, job.id, 'injected', 'STDOUT', later())),
      );
      expect(error).toBeInstanceOf(NotFoundError);
      expect(await suite.asOwner(a.id, (stores) => stores.logs.list(a.id, job.id, 0, 10))).toEqual([chunk]);
    });
  });

  describe('LogStore batches (appendMany)', () => {
    const suite = useStoreSuite(open);

    it('stores a batch in order with increasing ids, skips a repeated seq, and counts only what it stored', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const batch = [1, 2, 3].map((seq) => ({ seq, log_chunk: `line ${seq}\n`, stream_type: 'STDOUT' as const }));
      const first = await suite.asOwner(owner.id, (stores) => stores.logs.appendMany(owner.id, job.id, batch, later()));
      expect(first.map((chunk) => chunk.log_chunk)).toEqual(['line 1\n', 'line 2\n', 'line 3\n']);
      const ids = first.map((chunk) => chunk.id);
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
      expect(new Set(ids).size).toBe(3);

      const retried = await suite.asOwner(owner.id, (stores) =>
        stores.logs.appendMany(
          owner.id,
          job.id,
          [
            ...batch,
            { seq: 4, log_chunk: 'line 4\n', stream_type: 'STDERR' },
            { seq: null, log_chunk: 'x', stream_type: 'SYSTEM' },
          ],
          later(),
        ),
      );
      expect(retried.map((chunk) => [chunk.log_chunk, chunk.stream_type])).toEqual([
        ['line 4\n', 'STDERR'],
        ['x', 'SYSTEM'],
      ]);
      const listed = await suite.asOwner(owner.id, (stores) => stores.logs.list(owner.id, job.id, 0, 100));
      expect(listed.map((chunk) => chunk.log_chunk)).toEqual(['line 1\n', 'line 2\n', 'line 3\n', 'line 4\n', 'x']);
      expect(await suite.asOwner(owner.id, (stores) => stores.logs.usage(owner.id, job.id))).toEqual({
        bytes: 4 * 7 + 1,
        cut: false,
        lastSeq: 4,
      });
    });

    it("keeps seqs per job, and refuses a batch for another owner's job", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const jobA = await suite.asOwner(a.id, (stores) => stores.jobs.create(newJob(a.id, a.vine)));
      const otherA = await suite.asOwner(a.id, (stores) => stores.jobs.create(newJob(a.id, null)));
      const one = [{ seq: 1, log_chunk: 'one', stream_type: 'STDOUT' as const }];
      await suite.asOwner(a.id, (stores) => stores.logs.appendMany(a.id, jobA.id, one, later()));
      expect(await suite.asOwner(a.id, (stores) => stores.logs.appendMany(a.id, otherA.id, one, later()))).toHaveLength(
        1,
      );
      expect(
        await rejectionOf(suite.asOwner(b.id, (stores) => stores.logs.appendMany(b.id, jobA.id, one, later()))),
      ).toBeInstanceOf(NotFoundError);
      expect((await suite.asOwner(a.id, (stores) => stores.logs.usage(a.id, jobA.id))).bytes).toBe(3);
    });
  });

  describe('LogStore usage and retention', () => {
    const suite = useStoreSuite(open);

    it('counts the UTF-8 bytes of every chunk of a job, and records a cut', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const other = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, null)));
      expect(await suite.asOwner(owner.id, (stores) => stores.logs.usage(owner.id, job.id))).toEqual({
        bytes: 0,
        cut: false,
        lastSeq: 0,
      });
      await suite.asOwner(owner.id, async (stores) => {
        await stores.logs.append(owner.id, job.id, 'ü'.repeat(10), 'STDOUT', later());
        await stores.logs.append(owner.id, job.id, 'abc', 'STDERR', later());
        await stores.logs.append(owner.id, other.id, 'elsewhere', 'STDOUT', later());
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.logs.usage(owner.id, job.id))).toEqual({
        bytes: 23,
        cut: false,
        lastSeq: 0,
      });
      await suite.asOwner(owner.id, (stores) => stores.logs.markCut(owner.id, job.id));
      expect(await suite.asOwner(owner.id, (stores) => stores.logs.usage(owner.id, job.id))).toEqual({
        bytes: 23,
        cut: true,
        lastSeq: 0,
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.logs.usage(owner.id, other.id))).toEqual({
        bytes: 9,
        cut: false,
        lastSeq: 0,
      });
    });

    it("counts concurrent appends exactly, and never shows or cuts another owner's job", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const job = await suite.asOwner(a.id, (stores) => stores.jobs.create(newJob(a.id, a.vine)));
      await Promise.all(
        Array.from({ length: 8 }, () =>
          suite.asOwner(a.id, async (stores) => {
            await stores.logs.usage(a.id, job.id);
            await stores.logs.append(a.id, job.id, '0123456789', 'STDOUT', later());
          }),
        ),
      );
      expect((await suite.asOwner(a.id, (stores) => stores.logs.usage(a.id, job.id))).bytes).toBe(80);
      expect(await rejectionOf(suite.asOwner(b.id, (stores) => stores.logs.usage(b.id, job.id)))).toBeInstanceOf(
        NotFoundError,
      );
      expect(await rejectionOf(suite.asOwner(b.id, (stores) => stores.logs.markCut(b.id, job.id)))).toBeInstanceOf(
        NotFoundError,
      );
      expect((await suite.asOwner(a.id, (stores) => stores.logs.usage(a.id, job.id))).cut).toBe(false);
    });

    it('reads what an append needs of a job and its log in one call, only for its owner', async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const finishedAt = later();
      const job = await suite.asOwner(a.id, (stores) =>
        stores.jobs.create(newJob(a.id, a.vine, { status: 'CANCELLED', finished_at: finishedAt })),
      );
      const batch = [1, 2, 3].map((seq) => ({ seq, log_chunk: 'ü'.repeat(seq), stream_type: 'STDOUT' as const }));
      await suite.asOwner(a.id, (stores) => stores.logs.appendMany(a.id, job.id, batch, later()));
      const stateFrom = (firstSeq: number | null) =>
        suite.asOwner(a.id, (stores) => stores.logs.lockForAppend(a.id, job.id, firstSeq));
      expect(await stateFrom(4)).toEqual({
        job: { status: 'CANCELLED', claimed_by_worker_id: null, finished_at: finishedAt },
        bytes: 12,
        cut: false,
        lastSeq: 3,
      });
      // The last seq is exact wherever the batch starts: a repeat, the end, past a gap, or no seq.
      expect((await stateFrom(1))?.lastSeq).toBe(3);
      expect((await stateFrom(3))?.lastSeq).toBe(3);
      expect((await stateFrom(9))?.lastSeq).toBe(3);
      expect((await stateFrom(null))?.lastSeq).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.logs.lockForAppend(b.id, job.id, 1))).toBeNull();
      expect(
        await suite.asOwner(a.id, (stores) =>
          stores.logs.lockForAppend(a.id, '00000000-0000-4000-8000-000000000000', 1),
        ),
      ).toBeNull();
    });

    it('holds the job from lockForAppend to the end of the unit of work: concurrent appenders count in turn', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      // Each appender reads the bytes so far and adds one: under the lock each sees all earlier ones.
      const seen = await Promise.all(
        Array.from({ length: 8 }, () =>
          suite.asOwner(owner.id, async (stores) => {
            const state = await stores.logs.lockForAppend(owner.id, job.id, null);
            await stores.logs.appendMany(
              owner.id,
              job.id,
              [{ seq: null, log_chunk: 'x', stream_type: 'STDOUT' }],
              later(),
            );
            return state?.bytes;
          }),
        ),
      );
      expect(seen.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect((await suite.asOwner(owner.id, (stores) => stores.logs.usage(owner.id, job.id))).bytes).toBe(8);
    });

    it('gives concurrent appenders of one job the last seq as the one before them left it', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      // Each sends the seq after the last one it read: were two to read the same last seq (or one
      // read a stale one), the later insert would conflict and store nothing.
      const stored = await Promise.all(
        Array.from({ length: 8 }, () =>
          suite.asOwner(owner.id, async (stores) => {
            const state = await stores.logs.lockForAppend(owner.id, job.id, 1);
            const seq = (state?.lastSeq ?? 0) + 1;
            const chunk = { seq, log_chunk: `line ${seq}\n`, stream_type: 'STDOUT' as const };
            return (await stores.logs.appendMany(owner.id, job.id, [chunk], later())).length;
          }),
        ),
      );
      expect(stored).toEqual(Array(8).fill(1));
      expect((await suite.asOwner(owner.id, (stores) => stores.logs.usage(owner.id, job.id))).lastSeq).toBe(8);
    });

    it('deletes, in batches, only the chunks of jobs finished before the cutoff, of every owner', async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const oldFinish = later();
      const cutoff = later();
      const recentFinish = later();
      const oldA = await suite.asOwner(a.id, (stores) =>
        stores.jobs.create(newJob(a.id, a.vine, { status: 'SUCCESS', finished_at: oldFinish })),
      );
      const oldB = await suite.asOwner(b.id, (stores) =>
        stores.jobs.create(newJob(b.id, b.vine, { status: 'FAILED', finished_at: oldFinish })),
      );
      const recent = await suite.asOwner(a.id, (stores) =>
        stores.jobs.create(newJob(a.id, null, { status: 'SUCCESS', finished_at: recentFinish })),
      );
      const running = await suite.asOwner(a.id, (stores) => stores.jobs.create(newJob(a.id, null)));
      for (const [owner, job] of [
        [a.id, oldA.id],
        [a.id, oldA.id],
        [a.id, oldA.id],
        [b.id, oldB.id],
        [b.id, oldB.id],
        [a.id, recent.id],
        [a.id, running.id],
      ] as const) {
        await suite.asOwner(owner, (stores) => stores.logs.append(owner, job, 'line\n', 'STDOUT', later()));
      }
      const batch = () => suite.asSystem((stores) => stores.logs.deleteOfJobsFinishedBefore(cutoff, 3));
      expect([await batch(), await batch(), await batch()]).toEqual([3, 2, 0]);
      const left = async (owner: string, job: string) =>
        (await suite.asOwner(owner, (stores) => stores.logs.list(owner, job, 0, 100))).length;
      expect([
        await left(a.id, oldA.id),
        await left(b.id, oldB.id),
        await left(a.id, recent.id),
        await left(a.id, running.id),
      ]).toEqual([0, 0, 1, 1]);
      // Purged jobs hold no log bytes, so later passes do not walk them again.
      const bytes = async (owner: string, job: string) =>
        (await suite.asOwner(owner, (stores) => stores.logs.usage(owner, job))).bytes;
      expect([await bytes(a.id, oldA.id), await bytes(b.id, oldB.id), await bytes(a.id, recent.id)]).toEqual([
        0,
        0,
        'line\n'.length,
      ]);
    });
  });
}
