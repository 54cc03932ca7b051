/**
 * DESIGN §3: a successful DEPLOY's status change and finalizeDeployment commit together or not at
 * all. Run through the real use cases on the SQL unit of work, with saving the components made to
 * fail: the job must stay PROCESSING and the vine untouched; without the failure all of it lands.
 */
import {
  AesGcmSecretBox,
  CryptoRandom,
  createUseCases,
  DEFAULT_CORE_SETTINGS,
  NO_PROVIDERS,
  type Stores,
  type UnitOfWork,
  type UseCases,
} from '@trellis/core';
import {
  checkTestPostgres,
  describeWithPostgres,
  FakeClock,
  FakeTokenSigner,
  MemoryArtifactStore,
  MemoryEventBus,
  TEST_ENCRYPTION_KEY,
  type TestDialect,
} from '@trellis/testkit';
import { describe, expect, it } from 'vitest';
import { useMigratedDatabases } from './support/sqlStores.js';

const postgres = await checkTestPostgres();

describe('finalizeDeployment atomicity on SQLite', () => {
  describeAtomicity('sqlite');
});

describeWithPostgres('finalizeDeployment atomicity on Postgres', postgres, () => {
  describeAtomicity('postgres');
});

/** A unit of work whose `vines.saveComponents` can be made to fail, as a disk or a bug would. */
class UnitOfWorkWithFailingComponents implements UnitOfWork {
  failSaveComponents = false;
  constructor(private readonly inner: UnitOfWork) {}

  run<T>(scope: Parameters<UnitOfWork['run']>[0], work: (stores: Stores) => Promise<T>): Promise<T> {
    return this.inner.run(scope, (stores) => {
      if (!this.failSaveComponents) return work(stores);
      const vines: Stores['vines'] = Object.create(stores.vines, {
        saveComponents: {
          value: async () => {
            throw new Error('saving the components failed');
          },
        },
      });
      return work({ ...stores, vines });
    });
  }

  read<T>(scope: Parameters<UnitOfWork['read']>[0], work: (stores: Stores) => Promise<T>): Promise<T> {
    return this.inner.read(scope, work);
  }

  check(): Promise<void> {
    return this.inner.check();
  }
}

function describeAtomicity(dialect: TestDialect): void {
  const databases = useMigratedDatabases(dialect);

  it('a DEPLOY reported SUCCESS whose components cannot be saved changes nothing; once they can, all commits', async () => {
    const { store, close } = await databases.openStore();
    try {
      const uow = new UnitOfWorkWithFailingComponents(store.uow);
      const clock = new FakeClock();
      const core: UseCases = createUseCases({
        uow,
        clock,
        random: new CryptoRandom(),
        events: new MemoryEventBus(),
        artifacts: new MemoryArtifactStore(),
        signer: new FakeTokenSigner(clock),
        secrets: new AesGcmSecretBox([TEST_ENCRYPTION_KEY]),
        providers: NO_PROVIDERS,
        settings: DEFAULT_CORE_SETTINGS,
      });

      const user = await core.auth.ensureUser({ email: 'ops@example.test' });
      const person = { userId: user.id, email: user.email };
      const vineyard = await core.vineyards.create(person, { name: 'prod' });
      const vine = await core.vines.create(person, {
        name: 'web',
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': 'output "url" { value = "https://web.example.test" }\n' } },
      });
      const registration = await core.workers.register(person, { name: 'agent-1' });
      const agent = await core.workers.authenticate(registration.worker_id, registration.worker_token);
      const job = await core.jobs.create(person, { job_type: 'DEPLOY', configuration_id: vine.id });
      clock.advance({ seconds: 1 });
      const claimed = await core.jobs.claim(agent);
      expect(claimed?.job.id).toBe(job.id);
      const before = {
        job: await core.jobs.get(person, job.id),
        vine: await core.vines.get(person, vine.id),
      };
      expect(before.job.status).toBe('PROCESSING');
      expect(before.vine.status).toBe('DEPLOYING');

      const report = {
        status: 'SUCCESS',
        execution_metadata: {
          cluster_name: 'eks-prod',
          cluster_endpoint: 'https://eks.example.test',
          argocd_url: 'https://argocd.example.test',
          outputs: {
            url: { value: 'https://web.example.test', type: 'string', sensitive: false },
            db_password: { value: 'hunter2', type: 'string', sensitive: true },
          },
        },
      };
      clock.advance({ seconds: 1 });
      uow.failSaveComponents = true;
      await expect(core.jobs.reportStatus(agent, job.id, report)).rejects.toThrow('saving the components failed');

      expect(await core.jobs.get(person, job.id)).toEqual(before.job);
      expect(await core.vines.get(person, vine.id)).toEqual(before.vine);
      expect(before.vine.components).toEqual({ cluster: null, argocd: null, outputs: null });

      uow.failSaveComponents = false;
      const done = await core.jobs.reportStatus(agent, job.id, report);
      expect(done.status).toBe('SUCCESS');
      const after = await core.vines.get(person, vine.id);
      expect(after.status).toBe('DEPLOYED');
      expect(after.components).toEqual({
        cluster: { name: 'eks-prod', endpoint: 'https://eks.example.test', job_id: job.id },
        argocd: { url: 'https://argocd.example.test', job_id: job.id },
        outputs: { values: { url: 'https://web.example.test' }, sensitive: ['db_password'], job_id: job.id },
      });
    } finally {
      await close();
    }
  });
}
