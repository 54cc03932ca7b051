import { DEFAULT_WORKSPACE_SETTINGS, type Vine, type VineComponents } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, later, newCloudIdentity, newJob, newVine, newVineyard, uuid } from './fixtures.js';
import { attemptOnOthersRecord, expectConflict, type OpenStoreHarness, rejectionOf, useStoreSuite } from './harness.js';

const NO_COMPONENTS: VineComponents = { cluster: null, argocd: null, outputs: null };

export function describeVineStoreConformance(open: OpenStoreHarness): void {
  describe('VineStore', () => {
    const suite = useStoreSuite(open);

    it('keeps the workspace fields (issue 26): defaults when left out, set on create and by updateSettings', async () => {
      const owner = await suite.seedOwner();
      expect(owner.vine).toMatchObject({ tags: [], terraform_version: 'latest', execution_mode: 'remote' });
      const { tags: _t, terraform_version: _v, execution_mode: _m, ...bare } = newVine(owner.id, owner.vineyard.id);
      const defaulted = await suite.asOwner(owner.id, (stores) => stores.vines.create(bare));
      expect(defaulted).toMatchObject({ tags: [], terraform_version: 'latest', execution_mode: 'remote' });
      const tagged = await suite.asOwner(owner.id, (stores) =>
        stores.vines.create(
          newVine(owner.id, owner.vineyard.id, {
            tags: ['team-a', 'web'],
            terraform_version: '1.12.6',
            execution_mode: 'local',
          }),
        ),
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, tagged.id))).toMatchObject({
        tags: ['team-a', 'web'],
        terraform_version: '1.12.6',
        execution_mode: 'local',
      });
      const updated = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(
          owner.id,
          tagged.id,
          {
            name: 'renamed',
            tags: ['web'],
            execution_mode: 'remote',
            variables: { a: { value: '1', sensitive: false } },
          },
          later(),
        ),
      );
      expect(updated).toMatchObject({
        name: 'renamed',
        tags: ['web'],
        execution_mode: 'remote',
        variables: { a: { value: '1' } },
      });
      const clash = await rejectionOf(
        suite.asOwner(owner.id, (stores) =>
          stores.vines.updateSettings(owner.id, tagged.id, { name: owner.vine.name }, later()),
        ),
      );
      expect(clash).toMatchObject({ code: 'vine_name_taken' });
    });

    it('keeps workspace settings (m043): all defaults when left out, each one as set, back to defaults', async () => {
      const owner = await suite.seedOwner();
      expect(owner.vine.workspace_settings).toEqual(DEFAULT_WORKSPACE_SETTINGS);
      const { workspace_settings: _s, ...bare } = newVine(owner.id, owner.vineyard.id);
      const defaulted = await suite.asOwner(owner.id, (stores) => stores.vines.create(bare));
      expect(defaulted.workspace_settings).toEqual(DEFAULT_WORKSPACE_SETTINGS);
      const settings = {
        ...DEFAULT_WORKSPACE_SETTINGS,
        description: 'the network ✓',
        auto_apply: true,
        allow_destroy_plan: false,
        working_directory: 'envs/prod',
        trigger_prefixes: ['/modules', '/shared'],
        auto_destroy_at: '2027-01-01T00:00:00.000Z',
      };
      const made = await suite.asOwner(owner.id, (stores) =>
        stores.vines.create(newVine(owner.id, owner.vineyard.id, { workspace_settings: settings })),
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, made.id))).toMatchObject({
        workspace_settings: settings,
      });
      const changed = { ...settings, auto_apply: false, trigger_prefixes: [], trigger_patterns: ['/**/net/*'] };
      await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(owner.id, made.id, { workspace_settings: changed }, later()),
      );
      expect(
        (await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, made.id)))?.workspace_settings,
      ).toEqual(changed);
      await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(
          owner.id,
          made.id,
          { workspace_settings: { ...DEFAULT_WORKSPACE_SETTINGS } },
          later(),
        ),
      );
      expect(
        (await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, made.id)))?.workspace_settings,
      ).toEqual(DEFAULT_WORKSPACE_SETTINGS);
    });

    it('creates a vine and reads it back by id, name and project name, JSON and nulls intact', async () => {
      const owner = await suite.seedOwner();
      const identity = await suite.asOwner(owner.id, (stores) =>
        stores.cloudIdentities.create(newCloudIdentity(owner.id)),
      );
      const vine = newVine(owner.id, owner.vineyard.id, {
        cloud_identity_id: identity.id,
        source: { type: 'inline', files: { 'main.tf': 'output "x" {\n  value = "ü ✓ \\" \'"\n}\n', 'mod/a.tf': '' } },
        variables: {},
        engine: { name: 'terraform', version: '1.9.8' },
        status: 'FAILED',
        status_message: 'plan failed: exit 1',
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.create(vine))).toEqual(vine);
      const read = await suite.asOwner(owner.id, async (stores) => ({
        byId: await stores.vines.get(owner.id, vine.id),
        byName: await stores.vines.findByName(owner.id, vine.name),
        byProject: await stores.vines.findByProjectName(owner.id, vine.project_name),
      }));
      expect(read).toEqual({ byId: vine, byName: vine, byProject: vine });
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, owner.vine.id))).toEqual(owner.vine);
    });

    it('answers null for an unknown id, name or project name', async () => {
      const owner = await suite.seedOwner();
      const read = await suite.asOwner(owner.id, async (stores) => [
        await stores.vines.get(owner.id, uuid()),
        await stores.vines.findByName(owner.id, 'nope'),
        await stores.vines.findByProjectName(owner.id, 'nope'),
      ]);
      expect(read).toEqual([null, null, null]);
    });

    it('lists oldest first and filters by vineyard', async () => {
      const owner = await suite.seedOwner();
      const other = await suite.asOwner(owner.id, (stores) => stores.vineyards.create(newVineyard(owner.id)));
      const later1 = newVine(owner.id, other.id, { created_at: at(5), updated_at: at(5) });
      const earliest = newVine(owner.id, owner.vineyard.id, { created_at: at(1), updated_at: at(1) });
      await suite.asOwner(owner.id, async (stores) => {
        await stores.vines.create(later1);
        await stores.vines.create(earliest);
      });
      const all = await suite.asOwner(owner.id, (stores) => stores.vines.list(owner.id));
      expect(all.map((vine) => vine.id)).toEqual([earliest.id, later1.id, owner.vine.id]);
      const filtered = await suite.asOwner(owner.id, (stores) =>
        stores.vines.list(owner.id, { vineyard_id: other.id }),
      );
      expect(filtered).toEqual([later1]);
    });

    it('refuses a duplicate name (vine_name_taken) or project name (project_name_taken) per owner', async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      await expectConflict(
        suite.asOwner(a.id, (stores) =>
          stores.vines.create(newVine(a.id, a.vineyard.id, { name: a.vine.name, project_name: 'fresh-project' })),
        ),
        'vine_name_taken',
      );
      await expectConflict(
        suite.asOwner(a.id, (stores) =>
          stores.vines.create(newVine(a.id, a.vineyard.id, { name: 'fresh-name', project_name: a.vine.project_name })),
        ),
        'project_name_taken',
      );
      expect(await suite.asOwner(a.id, (stores) => stores.vines.list(a.id))).toEqual([a.vine]);
      const same = newVine(b.id, b.vineyard.id, { name: a.vine.name, project_name: a.vine.project_name });
      expect(await suite.asOwner(b.id, (stores) => stores.vines.create(same))).toEqual(same);
    });

    it('updates status, message and updated_at, and returns the vine', async () => {
      const owner = await suite.seedOwner();
      const when = later();
      const failed = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateStatus(owner.id, owner.vine.id, 'FAILED', 'apply failed', when),
      );
      const expected: Vine = { ...owner.vine, status: 'FAILED', status_message: 'apply failed', updated_at: when };
      expect(failed).toEqual(expected);
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, owner.vine.id))).toEqual(expected);
      const cleared = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateStatus(owner.id, owner.vine.id, 'PLANNING', null, when),
      );
      expect(cleared.status_message).toBeNull();
    });

    it("never shows or changes one owner's vines for another", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const seen = await suite.asOwner(b.id, async (stores) => [
        await stores.vines.get(b.id, a.vine.id),
        await stores.vines.findByName(b.id, a.vine.name),
        await stores.vines.findByProjectName(b.id, a.vine.project_name),
        (await stores.vines.list(b.id)).filter((vine) => vine.owner_id === a.id),
      ]);
      expect(seen).toEqual([null, null, null, []]);
      await attemptOnOthersRecord(
        suite.asOwner(b.id, (stores) => stores.vines.updateStatus(b.id, a.vine.id, 'FAILED', 'hijacked', later())),
      );
      expect(await suite.asOwner(a.id, (stores) => stores.vines.get(a.id, a.vine.id))).toEqual(a.vine);
    });
  });

  describe('VineStore components', () => {
    const suite = useStoreSuite(open);

    /** Components name the job that wrote them; those jobs must exist. */
    async function jobsOf(ownerId: string, vine: Vine, count: number): Promise<string[]> {
      return suite.asOwner(ownerId, async (stores) => {
        const ids: string[] = [];
        for (let i = 0; i < count; i += 1) ids.push((await stores.jobs.create(newJob(ownerId, vine))).id);
        return ids;
      });
    }

    it('has no components until some are saved', async () => {
      const owner = await suite.seedOwner();
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.getComponents(owner.id, owner.vine.id))).toEqual(
        NO_COMPONENTS,
      );
    });

    it('saves every kind and reads them back with the job that wrote each', async () => {
      const owner = await suite.seedOwner();
      const [job] = await jobsOf(owner.id, owner.vine, 1);
      const components: VineComponents = {
        cluster: { name: 'eks-prod', endpoint: 'https://eks.example.test', job_id: job as string },
        argocd: { url: 'https://argocd.example.test', job_id: job as string },
        outputs: {
          values: { vpc_id: 'vpc-1', subnets: ['a', 'b'], nested: { count: 3, ok: true, none: null } },
          job_id: job as string,
        },
      };
      await suite.asOwner(owner.id, (stores) =>
        stores.vines.saveComponents(owner.id, owner.vine.id, components, later()),
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.getComponents(owner.id, owner.vine.id))).toEqual(
        components,
      );
    });

    it('replaces only the kinds given and leaves the null ones as they were', async () => {
      const owner = await suite.seedOwner();
      const [first, second] = (await jobsOf(owner.id, owner.vine, 2)) as [string, string];
      await suite.asOwner(owner.id, (stores) =>
        stores.vines.saveComponents(
          owner.id,
          owner.vine.id,
          {
            cluster: { name: 'c1', endpoint: null, job_id: first },
            argocd: { url: 'https://argo-1.example.test', job_id: first },
            outputs: { values: { a: 1 }, job_id: first },
          },
          later(),
        ),
      );
      await suite.asOwner(owner.id, (stores) =>
        stores.vines.saveComponents(
          owner.id,
          owner.vine.id,
          { cluster: null, argocd: { url: 'https://argo-2.example.test', job_id: second }, outputs: null },
          later(),
        ),
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.getComponents(owner.id, owner.vine.id))).toEqual({
        cluster: { name: 'c1', endpoint: null, job_id: first },
        argocd: { url: 'https://argo-2.example.test', job_id: second },
        outputs: { values: { a: 1 }, job_id: first },
      });
    });

    it('clears every kind', async () => {
      const owner = await suite.seedOwner();
      const [job] = (await jobsOf(owner.id, owner.vine, 1)) as [string];
      await suite.asOwner(owner.id, (stores) =>
        stores.vines.saveComponents(
          owner.id,
          owner.vine.id,
          { cluster: null, argocd: null, outputs: { values: {}, job_id: job } },
          later(),
        ),
      );
      await suite.asOwner(owner.id, (stores) => stores.vines.clearComponents(owner.id, owner.vine.id));
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.getComponents(owner.id, owner.vine.id))).toEqual(
        NO_COMPONENTS,
      );
    });

    it("never shows, writes or clears one owner's components for another", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const [aJob] = (await jobsOf(a.id, a.vine, 1)) as [string];
      const [bJob] = (await jobsOf(b.id, b.vine, 1)) as [string];
      const mine: VineComponents = {
        cluster: { name: 'mine', endpoint: 'https://mine.example.test', job_id: aJob },
        argocd: null,
        outputs: { values: { secret_ish: 'x' }, job_id: aJob },
      };
      await suite.asOwner(a.id, (stores) => stores.vines.saveComponents(a.id, a.vine.id, mine, later()));
      expect(await suite.asOwner(b.id, (stores) => stores.vines.getComponents(b.id, a.vine.id))).toEqual(NO_COMPONENTS);
      await attemptOnOthersRecord(
        suite.asOwner(b.id, (stores) =>
          stores.vines.saveComponents(
            b.id,
            a.vine.id,
            {
              cluster: { name: 'theirs', endpoint: null, job_id: bJob },
              argocd: { url: 'https://evil.example.test', job_id: bJob },
              outputs: { values: {}, job_id: bJob },
            },
            later(),
          ),
        ),
      );
      await attemptOnOthersRecord(suite.asOwner(b.id, (stores) => stores.vines.clearComponents(b.id, a.vine.id)));
      expect(await suite.asOwner(a.id, (stores) => stores.vines.getComponents(a.id, a.vine.id))).toEqual(mine);
    });

    it('keeps drift settings, the drift result and run triggers, and finds downstream vines', async () => {
      const owner = await suite.seedOwner();
      const downstream = newVine(owner.id, owner.vineyard.id);
      const unrelated = newVine(owner.id, owner.vineyard.id);
      await suite.asOwner(owner.id, async (stores) => {
        await stores.vines.create(downstream);
        await stores.vines.create(unrelated);
      });
      const updated = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(
          owner.id,
          downstream.id,
          {
            drift_detection: { interval_minutes: 90 },
            next_drift_check_at: at(30),
            triggers: { after: [owner.vine.id] },
          },
          at(20),
        ),
      );
      expect(updated).toEqual({
        ...downstream,
        drift_detection: { interval_minutes: 90 },
        next_drift_check_at: at(30),
        triggers: { after: [owner.vine.id] },
        updated_at: at(20),
      });
      const drift = {
        status: 'drifted' as const,
        checked_at: at(31),
        job_id: uuid(),
        changes: { add: 0, change: 1, destroy: 0 },
      };
      await suite.asOwner(owner.id, (stores) => stores.vines.recordDrift(owner.id, downstream.id, drift));
      const read = await suite.asOwner(owner.id, async (stores) => ({
        vine: await stores.vines.get(owner.id, downstream.id),
        downstream: await stores.vines.listDownstream(owner.id, owner.vine.id),
        none: await stores.vines.listDownstream(owner.id, unrelated.id),
      }));
      expect(read.vine?.drift).toEqual(drift);
      expect(read.downstream.map((vine) => vine.id)).toEqual([downstream.id]);
      expect(read.none).toEqual([]);
      // A destroyed vine forgets its drift.
      await suite.asOwner(owner.id, (stores) => stores.vines.recordDrift(owner.id, downstream.id, null));
      const forgotten = await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, downstream.id));
      expect(forgotten?.drift).toBeNull();
      // Only the fields present change: clearing the schedule leaves the triggers.
      const cleared = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(
          owner.id,
          downstream.id,
          { drift_detection: null, next_drift_check_at: null },
          at(40),
        ),
      );
      expect(cleared).toMatchObject({
        drift_detection: null,
        next_drift_check_at: null,
        triggers: { after: [owner.vine.id] },
      });
      const source = { type: 'git' as const, url: 'https://github.com/acme/infra.git', ref: 'main', path: 'envs/prod' };
      const connected = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(owner.id, downstream.id, { source }, at(50)),
      );
      expect(connected).toMatchObject({ source, triggers: { after: [owner.vine.id] }, updated_at: at(50) });
      expect((await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, downstream.id)))?.source).toEqual(
        source,
      );
    });

    it('keeps the approval setting, set at create and changed or cleared by updateSettings', async () => {
      const owner = await suite.seedOwner();
      const vine = newVine(owner.id, owner.vineyard.id, { approval: { required: true, separate_approver: true } });
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.create(vine))).toEqual(vine);
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, vine.id))).toEqual(vine);
      const changed = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(
          owner.id,
          vine.id,
          { approval: { required: true, separate_approver: false } },
          at(9),
        ),
      );
      expect(changed).toEqual({ ...vine, approval: { required: true, separate_approver: false }, updated_at: at(9) });
      const cleared = await suite.asOwner(owner.id, (stores) =>
        stores.vines.updateSettings(owner.id, vine.id, { approval: null }, at(10)),
      );
      expect(cleared).toEqual({ ...vine, approval: null, updated_at: at(10) });
      expect(await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, vine.id))).toEqual(cleared);
    });

    it('takes due drift checks of every owner in system work, earliest first, up to the limit', async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const schedule = (ownerId: string, vineId: string, next: string | null) =>
        suite.asOwner(ownerId, (stores) =>
          stores.vines.updateSettings(
            ownerId,
            vineId,
            { drift_detection: { interval_minutes: 60 }, next_drift_check_at: next },
            at(1),
          ),
        );
      const third = newVine(a.id, a.vineyard.id);
      await suite.asOwner(a.id, (stores) => stores.vines.create(third));
      await schedule(a.id, a.vine.id, at(10));
      await schedule(b.id, b.vine.id, at(5));
      await schedule(a.id, third.id, at(50));
      const due = await suite.asSystem((stores) => stores.vines.takeDueDriftChecks(at(10), 10));
      expect(due.map((vine) => vine.id)).toEqual([b.vine.id, a.vine.id]);
      const one = await suite.asSystem((stores) => stores.vines.takeDueDriftChecks(at(60), 1));
      expect(one.map((vine) => vine.id)).toEqual([b.vine.id]);
    });
  });
}
