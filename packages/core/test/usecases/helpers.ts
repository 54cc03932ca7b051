import { DomainError, type Job, type WorkerActor } from '@trellis/core';
import { bodyOf, type TestCore } from '@trellis/testkit/memory';
import { expect } from 'vitest';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** Awaits `promise`, expects it to reject with `type` (and `code` when given), returns the error. */
export async function expectFailure<E extends DomainError>(
  promise: Promise<unknown>,
  type: ErrorClass<E>,
  code?: string,
): Promise<E> {
  let outcome: { error: unknown } | { value: unknown };
  try {
    outcome = { value: await promise };
  } catch (error) {
    outcome = { error };
  }
  if (!('error' in outcome)) throw new Error(`expected a ${type.name}, but it resolved`);
  expect(outcome.error).toBeInstanceOf(type);
  expect(outcome.error).toBeInstanceOf(DomainError);
  if (code !== undefined) expect((outcome.error as DomainError).code).toBe(code);
  return outcome.error as E;
}

/** Same, for a function that throws synchronously. */
export function expectThrown<E extends DomainError>(run: () => unknown, type: ErrorClass<E>, code?: string): E {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(type);
  if (code !== undefined) expect((thrown as DomainError).code).toBe(code);
  return thrown as E;
}

/**
 * The queued job `id`, claimed by `agent` (it must be the job the claim gets), run to SUCCESS with
 * a plan artifact (for a PLAN) and one resource to add in its metadata, plus `metadata`: a plan
 * the deploy gate and the deploy offer take as succeeded.
 */
export async function runToSuccess(
  core: TestCore,
  agent: WorkerActor,
  id: string,
  metadata: Record<string, unknown> = {},
): Promise<Job> {
  const claimed = await core.useCases.jobs.claim(agent);
  expect(claimed?.job.id).toBe(id);
  if (claimed?.job.job_type === 'PLAN') await core.useCases.planArtifacts.upload(agent, id, bodyOf('plan-bytes'));
  return core.useCases.jobs.reportStatus(agent, id, {
    status: 'SUCCESS',
    execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, ...metadata },
  });
}

/** A UUID that names nothing. */
export const UNKNOWN_ID = '9f9f9f9f-9f9f-4f9f-8f9f-9f9f9f9f9f9f';

/**
 * Records the record reads `work` makes through the stores: each `<store>.<method> <id>` of the
 * methods named per store (their second argument is the record's id), in order.
 */
export async function readsDuring(
  core: TestCore,
  methods: Readonly<Record<string, readonly string[]>>,
  work: () => Promise<unknown>,
): Promise<string[]> {
  const reads: string[] = [];
  core.uow.wrapStores = (stores) =>
    new Proxy(stores, {
      get: (target, name) => {
        const store = Reflect.get(target, name);
        const recorded = methods[String(name)];
        if (!recorded) return store;
        return new Proxy(store, {
          get: (inner, method) => {
            const call = Reflect.get(inner, method);
            if (!recorded.includes(String(method))) return call;
            return (ownerId: string, id: string) => {
              reads.push(`${String(name)}.${String(method)} ${id}`);
              return call.call(inner, ownerId, id);
            };
          },
        });
      },
    });
  try {
    await work();
  } finally {
    core.uow.wrapStores = undefined;
  }
  return reads;
}
