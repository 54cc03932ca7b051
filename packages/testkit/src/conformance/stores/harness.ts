import {
  ConflictError,
  NotFoundError,
  ownerScope,
  type Stores,
  systemScope,
  type UnitOfWork,
  type User,
  type Vine,
  type Vineyard,
  type Worker,
} from '@trellis/core';
import { afterEach, beforeEach, expect } from 'vitest';
import { newUser, newVine, newVineyard, newWorker } from './fixtures.js';

/** What an adapter hands the suite: a unit of work on an empty, migrated database of its own. */
export interface StoreHarness {
  uow: UnitOfWork;
  /** Closes the connections and removes the database. */
  close(): Promise<void>;
}

export type OpenStoreHarness = () => Promise<StoreHarness>;

/** An owner with one of each record most tests need. */
export interface SeededOwner {
  id: string;
  user: User;
  vineyard: Vineyard;
  vine: Vine;
  worker: Worker;
}

/** The current test's database, and shortcuts to run work on it. */
export interface StoreSuite {
  readonly uow: UnitOfWork;
  asOwner<T>(ownerId: string, work: (stores: Stores) => Promise<T>): Promise<T>;
  asSystem<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
  /** A user with a vineyard, a vine and a worker, each committed. */
  seedOwner(): Promise<SeededOwner>;
}

/** Opens a fresh database before each test of the calling `describe` and closes it after. */
export function useStoreSuite(open: OpenStoreHarness): StoreSuite {
  let harness: StoreHarness | undefined;
  beforeEach(async () => {
    harness = await open();
  });
  afterEach(async () => {
    const closing = harness;
    harness = undefined;
    await closing?.close();
  });
  const suite: StoreSuite = {
    get uow(): UnitOfWork {
      if (!harness) throw new Error('the store suite is used outside a test');
      return harness.uow;
    },
    asOwner: (ownerId, work) => suite.uow.run(ownerScope(ownerId), work),
    asSystem: (work) => suite.uow.run(systemScope, work),
    async seedOwner() {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      return suite.asOwner(user.id, async (stores) => {
        const vineyard = await stores.vineyards.create(newVineyard(user.id));
        const vine = await stores.vines.create(newVine(user.id, vineyard.id));
        const worker = await stores.workers.create(newWorker(user.id));
        return { id: user.id, user, vineyard, vine, worker };
      });
    },
  };
  return suite;
}

/** The error `promise` rejects with (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.fail('expected the call to reject');
}

export async function expectConflict(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(ConflictError);
  expect(error).toMatchObject({ code });
}

/**
 * For calls on another owner's record: the store may refuse with `NotFoundError` or quietly do
 * nothing; the test then checks that nothing changed. Any other error fails.
 */
export async function attemptOnOthersRecord(promise: Promise<unknown>): Promise<void> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(NotFoundError);
  }
}
