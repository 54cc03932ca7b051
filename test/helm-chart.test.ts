/**
 * Issue 18, the Helm chart in deploy/helm/trellis: the real `helm` (built at a pinned version by
 * scripts/peers.sh) lints it with --strict and renders it over several value sets; every rendered
 * manifest is parsed and checked for what an operator relies on: probes, non-root pods on a
 * read-only root file system, secrets only by reference, the migration hook, the disruption
 * budget, the agent's grace period, and refusals of values that cannot work.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { requirePeer } from '@trellis/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { isMap, isPair, isScalar, parseAllDocuments, parseDocument, type YAMLMap } from 'yaml';

const run = promisify(execFile);
const chartDir = fileURLToPath(new URL('../deploy/helm/trellis/', import.meta.url));
const helm = requirePeer('helm', 'test/helm-chart.test.ts');
const workDir = mkdtempSync(join(tmpdir(), 'trellis-helm-'));

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are free-form Kubernetes objects
type Manifest = Record<string, any>;

let valueFiles = 0;
function valuesFile(values: object): string {
  valueFiles += 1;
  const path = join(workDir, `values-${valueFiles}.yaml`);
  writeFileSync(path, JSON.stringify(values));
  return path;
}

async function helmRun(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  // HOME and the helm directories point into the temp dir: the test reads no user configuration.
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(workDir, 'cache'),
    HELM_CONFIG_HOME: join(workDir, 'config'),
    HELM_DATA_HOME: join(workDir, 'data'),
  };
  try {
    const { stdout, stderr } = await run(helm as string, args, { env, maxBuffer: 16 * 1024 * 1024 });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    return { stdout: failed.stdout ?? '', stderr: failed.stderr ?? '', code: failed.code ?? 1 };
  }
}

async function lint(values: object): Promise<void> {
  const result = await helmRun(['lint', '--strict', chartDir, '-f', valuesFile(values)]);
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
}

async function render(values: object): Promise<Manifest[]> {
  const result = await helmRun(['template', 'prod', chartDir, '--namespace', 'trellis', '-f', valuesFile(values)]);
  expect(result.code, result.stderr).toBe(0);
  return parseAllDocuments(result.stdout)
    .map((document) => {
      expect(document.errors).toEqual([]);
      return document.toJSON() as Manifest | null;
    })
    .filter((manifest): manifest is Manifest => manifest !== null);
}

async function renderFailure(values: object): Promise<string> {
  const result = await helmRun(['template', 'prod', chartDir, '-f', valuesFile(values)]);
  expect(result.code).not.toBe(0);
  return result.stderr;
}

function find(manifests: Manifest[], kind: string, nameEnd: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && String(m.metadata.name).endsWith(nameEnd));
  expect(found, `${kind} *${nameEnd}`).toBeDefined();
  return found as Manifest;
}

function podSpecs(manifests: Manifest[]): Array<{ owner: string; spec: Manifest }> {
  return manifests
    .filter((m) => m.kind === 'Deployment' || m.kind === 'Job')
    .map((m) => ({ owner: `${m.kind}/${m.metadata.name}`, spec: m.spec.template.spec }));
}

function envOf(container: Manifest): Map<string, Manifest> {
  return new Map((container.env ?? []).map((entry: Manifest) => [entry.name, entry]));
}

/** Names whose values are credentials: they must come from a Secret, never a literal. */
const SECRET_NAME = /(SECRET|TOKEN|PASSWORD|DATABASE_URL|ENCRYPTION_KEY|CLIENT_ID)/;

/** What every pod of the chart must be, whatever the values. */
function expectHardenedPods(manifests: Manifest[]): void {
  const pods = podSpecs(manifests);
  expect(pods.length).toBeGreaterThan(0);
  for (const { owner, spec } of pods) {
    expect(spec.securityContext.runAsNonRoot, owner).toBe(true);
    expect(spec.securityContext.runAsUser, owner).toBeGreaterThan(0);
    expect(spec.automountServiceAccountToken, owner).toBe(false);
    const emptyDirs = new Set(
      (spec.volumes as Manifest[]).filter((volume) => volume.emptyDir !== undefined).map((volume) => volume.name),
    );
    for (const container of spec.containers as Manifest[]) {
      const where = `${owner} ${container.name}`;
      expect(container.securityContext.readOnlyRootFilesystem, where).toBe(true);
      expect(container.securityContext.allowPrivilegeEscalation, where).toBe(false);
      expect(container.securityContext.capabilities.drop, where).toEqual(['ALL']);
      const tmp = (container.volumeMounts as Manifest[]).find((mount) => mount.mountPath === '/tmp');
      expect(tmp && emptyDirs.has(tmp.name), `${where}: /tmp is an emptyDir`).toBe(true);
      for (const [name, entry] of envOf(container)) {
        if (!SECRET_NAME.test(name)) continue;
        expect(entry.value, `${where} ${name} is a literal`).toBeUndefined();
        expect(entry.valueFrom?.secretKeyRef?.name, `${where} ${name}`).toEqual(expect.any(String));
        expect(entry.valueFrom.secretKeyRef.key, `${where} ${name}`).toEqual(expect.any(String));
      }
    }
  }
  // Secrets are referenced, never rendered.
  expect(manifests.filter((m) => m.kind === 'Secret')).toEqual([]);
}

describe.skipIf(!helm)('the Helm chart (helm lint --strict, helm template)', () => {
  it('with its defaults: two server replicas on Postgres, probes, a budget, the migration hook and an agent', async () => {
    await lint({});
    const manifests = await render({});
    expectHardenedPods(manifests);

    const server = find(manifests, 'Deployment', '-server');
    expect(server.spec.replicas).toBe(2);
    expect(server.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    const [container] = server.spec.template.spec.containers;
    expect(container.command).toEqual(['trellis-server', 'serve']);
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.ports).toContainEqual({ name: 'http', containerPort: 8080, protocol: 'TCP' });
    expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    const env = envOf(container);
    expect(env.get('HOST')?.value).toBe('0.0.0.0');
    // Without an ingress nothing in front is trusted to name the client (per-client limits).
    expect(env.get('TRELLIS_TRUST_PROXY')?.value).toBe('false');
    for (const name of ['DATABASE_URL', 'CLI_JWT_SECRET', 'TRELLIS_ENCRYPTION_KEY', 'RELEASE_API_SECRET']) {
      expect(env.get(name)?.valueFrom.secretKeyRef, name).toMatchObject({ name: 'trellis', key: name });
    }
    // Optional secrets may be missing from the Secret (the server then uses its default); required ones may not.
    expect(env.get('CLI_JWT_SECRET')?.valueFrom.secretKeyRef.optional).toBeUndefined();
    expect(env.get('RELEASE_API_SECRET')?.valueFrom.secretKeyRef.optional).toBe(true);
    expect(env.get('TRELLIS_ARTIFACTS_URL')?.value).toMatch(/^s3:\/\//);

    const service = find(manifests, 'Service', 'prod-trellis');
    expect(service.spec.selector).toEqual(server.spec.selector.matchLabels);
    expect(service.spec.ports[0]).toMatchObject({ name: 'http', targetPort: 'http' });

    const budget = find(manifests, 'PodDisruptionBudget', '-server');
    expect(budget.spec.minAvailable).toBe(1);
    expect(budget.spec.selector.matchLabels).toEqual(server.spec.selector.matchLabels);

    const migrate = find(manifests, 'Job', '-migrate');
    expect(migrate.metadata.annotations['helm.sh/hook'].split(',').sort()).toEqual(['pre-install', 'pre-upgrade']);
    expect(migrate.metadata.annotations['helm.sh/hook-delete-policy']).toContain('before-hook-creation');
    const [migrator] = migrate.spec.template.spec.containers;
    expect(migrator.command).toEqual(['trellis-server', 'migrate']);
    // The hook alone migrates: a server pod on a database the hook has not migrated refuses to start.
    expect(envOf(container).get('TRELLIS_MIGRATE_ON_START')?.value).toBe('false');
    expect(migrator.image).toBe(container.image);
    expect(envOf(migrator).get('DATABASE_URL')?.valueFrom.secretKeyRef).toMatchObject({ key: 'DATABASE_URL' });
    expect(migrate.spec.template.spec.restartPolicy).toBe('Never');

    const agent = find(manifests, 'Deployment', '-agent');
    const agentSpec = agent.spec.template.spec;
    const [agentContainer] = agentSpec.containers;
    const agentEnv = envOf(agentContainer);
    expect(agentContainer.command).toEqual(['trellis-agent', 'run']);
    expect(agentEnv.get('TRELLIS_URL')?.value).toBe('http://prod-trellis:80');
    expect(agentEnv.get('TRELLIS_WORKER_ID')?.valueFrom.secretKeyRef).toMatchObject({ name: 'trellis-agent' });
    expect(agentEnv.get('TRELLIS_WORKER_TOKEN')?.valueFrom.secretKeyRef).toMatchObject({ name: 'trellis-agent' });
    expect(agentEnv.get('TRELLIS_AGENT_CONCURRENCY')?.value).toBe('2');
    expect(agentEnv.get('TRELLIS_AGENT_ON_SHUTDOWN')?.value).toBe('cancel');
    const cancelGrace = Number(agentEnv.get('TRELLIS_AGENT_CANCEL_GRACE_S')?.value);
    expect(agentSpec.terminationGracePeriodSeconds).toBeGreaterThan(cancelGrace);
    const workDir = agentEnv.get('TRELLIS_AGENT_WORK_DIR')?.value;
    const workMount = (agentContainer.volumeMounts as Manifest[]).find((mount) => mount.mountPath === workDir);
    const workVolume = (agentSpec.volumes as Manifest[]).find((volume) => volume.name === workMount?.name);
    expect(workVolume?.emptyDir?.sizeLimit).toEqual(expect.any(String));
    expect(agent.spec.strategy.type).toBe('Recreate');
  });

  it('with the ingress, the ServiceMonitor (bearer token) and the alerts on', async () => {
    const values = {
      ingress: { enabled: true, className: 'nginx', hosts: ['trellis.example.org'], tlsSecretName: 'trellis-tls' },
      metrics: { enabled: true, port: 0, serviceMonitor: { enabled: true }, prometheusRule: { enabled: true } },
      oauth: { github: { enabled: true, secretName: 'github-app' } },
    };
    await lint(values);
    const manifests = await render(values);
    expectHardenedPods(manifests);

    const ingress = find(manifests, 'Ingress', 'prod-trellis');
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.tls).toEqual([{ secretName: 'trellis-tls', hosts: ['trellis.example.org'] }]);
    expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({
      name: 'prod-trellis',
      port: { name: 'http' },
    });

    const server = find(manifests, 'Deployment', '-server');
    const env = envOf(server.spec.template.spec.containers[0]);
    expect(env.get('TRELLIS_WEB_URL')?.value).toBe('https://trellis.example.org');
    expect(env.get('TRELLIS_TRUST_PROXY')?.value).toBe('1');
    expect(env.get('TRELLIS_METRICS_TOKEN')?.valueFrom.secretKeyRef).toMatchObject({ key: 'TRELLIS_METRICS_TOKEN' });
    expect(env.has('TRELLIS_METRICS_PORT')).toBe(false);
    expect(env.get('TRELLIS_GITHUB_CLIENT_SECRET')?.valueFrom.secretKeyRef).toEqual({
      name: 'github-app',
      key: 'TRELLIS_GITHUB_CLIENT_SECRET',
    });

    const monitor = find(manifests, 'ServiceMonitor', 'prod-trellis');
    expect(monitor.spec.selector.matchLabels).toEqual(server.spec.selector.matchLabels);
    expect(monitor.spec.endpoints).toEqual([
      expect.objectContaining({
        port: 'http',
        path: '/metrics',
        authorization: { type: 'Bearer', credentials: { name: 'trellis', key: 'TRELLIS_METRICS_TOKEN' } },
      }),
    ]);

    const rules = find(manifests, 'PrometheusRule', 'prod-trellis');
    const alerts = new Map<string, string>(
      rules.spec.groups.flatMap((group: Manifest) => group.rules.map((rule: Manifest) => [rule.alert, rule.expr])),
    );
    expect([...alerts.keys()].sort()).toEqual([
      'TrellisAgentsOffline',
      'TrellisHighErrorRate',
      'TrellisOutboxBacklog',
      'TrellisQueueOldestJobAge',
    ]);
    expect(alerts.get('TrellisQueueOldestJobAge')).toMatch(/^max\(trellis_queue_oldest_job_age_seconds\{.*\}\) > 600$/);
    expect(alerts.get('TrellisAgentsOffline')).toMatch(/trellis_agents\{.*state="offline"\}/);
    expect(alerts.get('TrellisOutboxBacklog')).toMatch(/^max by \(outbox\) \(trellis_outbox_backlog\{/);
    expect(alerts.get('TrellisHighErrorRate')).toMatch(
      /trellis_http_request_duration_seconds_count\{.*status=~"5\.\."\}\[5m\]/,
    );
    // Each alert only reads this release's series.
    for (const [alert, expr] of alerts) expect(expr, alert).toContain('service="prod-trellis"');
  });

  it('with metrics on their own port: the Service and the ServiceMonitor use it, no token', async () => {
    const values = { metrics: { enabled: true, port: 9464, serviceMonitor: { enabled: true } } };
    await lint(values);
    const manifests = await render(values);
    const container = find(manifests, 'Deployment', '-server').spec.template.spec.containers[0];
    expect(envOf(container).get('TRELLIS_METRICS_PORT')?.value).toBe('9464');
    expect(envOf(container).has('TRELLIS_METRICS_TOKEN')).toBe(false);
    expect(container.ports).toContainEqual({ name: 'metrics', containerPort: 9464, protocol: 'TCP' });
    expect(find(manifests, 'Service', 'prod-trellis').spec.ports).toContainEqual(
      expect.objectContaining({ name: 'metrics', port: 9464, targetPort: 'metrics' }),
    );
    const [endpoint] = find(manifests, 'ServiceMonitor', 'prod-trellis').spec.endpoints;
    expect(endpoint.port).toBe('metrics');
    expect(endpoint.authorization).toBeUndefined();
    // The agent serves no metrics unless given a port.
    expect(manifests.filter((m) => m.kind === 'PodMonitor')).toEqual([]);
    expect(
      envOf(find(manifests, 'Deployment', '-agent').spec.template.spec.containers[0]).has('TRELLIS_AGENT_METRICS_PORT'),
    ).toBe(false);
  });

  it("with the agent's metrics port: the agent serves them and a PodMonitor scrapes its pod", async () => {
    const values = {
      metrics: { enabled: true, port: 9464, serviceMonitor: { enabled: true } },
      agent: { metricsPort: 9465 },
    };
    await lint(values);
    const manifests = await render(values);
    const agent = find(manifests, 'Deployment', '-agent');
    const [container] = agent.spec.template.spec.containers;
    expect(envOf(container).get('TRELLIS_AGENT_METRICS_PORT')?.value).toBe('9465');
    expect(container.ports).toEqual([{ name: 'metrics', containerPort: 9465, protocol: 'TCP' }]);
    const monitor = find(manifests, 'PodMonitor', '-agent');
    expect(monitor.spec.selector.matchLabels).toEqual(agent.spec.selector.matchLabels);
    expect(monitor.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
  });

  it('on SQLite: one replica on a kept volume, no budget, no migration Job', async () => {
    const values = { database: { type: 'sqlite' }, server: { replicas: 1 }, artifacts: { url: '' } };
    await lint(values);
    const manifests = await render(values);
    expectHardenedPods(manifests);
    const server = find(manifests, 'Deployment', '-server');
    expect(server.spec.replicas).toBe(1);
    expect(server.spec.strategy).toEqual({ type: 'Recreate' });
    const env = envOf(server.spec.template.spec.containers[0]);
    expect(env.has('DATABASE_URL')).toBe(false);
    expect(env.has('TRELLIS_ARTIFACTS_URL')).toBe(false);
    // No migration Job: the one replica migrates its SQLite file at start.
    expect(env.has('TRELLIS_MIGRATE_ON_START')).toBe(false);
    const claim = find(manifests, 'PersistentVolumeClaim', '-data');
    expect(claim.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    const data = (server.spec.template.spec.volumes as Manifest[]).find((volume) => volume.name === 'data');
    expect(data?.persistentVolumeClaim.claimName).toBe(claim.metadata.name);
    expect(env.get('TRELLIS_DATA_DIR')?.value).toBe('/var/lib/trellis');
    expect(manifests.filter((m) => m.kind === 'PodDisruptionBudget' || m.kind === 'Job')).toEqual([]);
  });

  it('refuses values that cannot work, saying why', async () => {
    expect(await renderFailure({ database: { type: 'sqlite' }, server: { replicas: 3 } })).toContain(
      'server.replicas is 3 but database.type is sqlite: several replicas need Postgres',
    );
    expect(await renderFailure({ artifacts: { url: 'file:///var/lib/trellis/artifacts' } })).toContain(
      'several replicas need object storage',
    );
    expect(await renderFailure({ agent: { cancelGraceSeconds: 120, terminationGracePeriodSeconds: 90 } })).toContain(
      'must exceed agent.cancelGraceSeconds',
    );
    // The grace period follows the cancel grace when it is not set.
    const manifests = await render({ agent: { cancelGraceSeconds: 300 } });
    expect(find(manifests, 'Deployment', '-agent').spec.template.spec.terminationGracePeriodSeconds).toBe(330);
  });
});

describe('values.yaml', () => {
  it('documents every value with a comment on it or on the block it belongs to', () => {
    const document = parseDocument(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
    const undocumented: string[] = [];
    const visit = (map: YAMLMap, path: string[], documented: boolean) => {
      map.items.forEach((pair, index) => {
        if (!isPair(pair) || !isScalar(pair.key)) return;
        const name = [...path, String(pair.key.value)];
        // A comment before the first key of a nested block is kept on the block's map.
        const commented =
          Boolean(pair.key.commentBefore) || (index === 0 && Boolean(map.commentBefore) && path.length > 0);
        if (isMap(pair.value) && pair.value.items.length > 0) {
          visit(pair.value, name, documented || commented);
        } else if (!(documented || commented)) {
          undocumented.push(name.join('.'));
        }
      });
    };
    expect(isMap(document.contents)).toBe(true);
    visit(document.contents as YAMLMap, [], false);
    expect(undocumented).toEqual([]);
  });
});
