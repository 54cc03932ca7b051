/**
 * A real control plane (trellis-server's composition: API + web interface) on loopback, over
 * SQLite in a temporary data directory. It can be restarted on the same port and database, as an
 * operator restarting the server would, so a browser's open pages reconnect to it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import type { Clock, OrgRole, UserActor, VineView, VineyardView } from '@trellis/core';
import { type ControlPlane, type ControlPlaneOptions, createControlPlane } from '@trellis/server';
import {
  addAcceptedMember,
  bootstrapSessionCookie,
  cliTokensFor,
  vineyardWithVine as testkitVineyardWithVine,
} from '@trellis/testkit';

export const BOOTSTRAP_TOKEN = 'web-tests-bootstrap-token-0123456789';
export const ADMIN_EMAIL = 'admin@localhost';
const JWT_SECRET = 'web-tests-jwt-secret-0123456789abcdef0123456789';

export type AgentClient = TrellisClient & { workerId: string };

export interface WebServerOptions {
  clock?: Clock;
  env?: Record<string, string>;
  signInProviders?: ControlPlaneOptions['signInProviders'];
}

export class WebServer {
  url = '';
  port = 0;
  controlPlane: ControlPlane | null = null;
  private readonly dataDir = mkdtempSync(join(tmpdir(), 'trellis-web-test-'));
  private readonly clients = new Map<string, TrellisClient>();

  constructor(private readonly options: WebServerOptions = {}) {}

  /** Starts on a free port, or after `stop()` on the same port and the same database and files. */
  async start(): Promise<this> {
    const controlPlane = await createControlPlane({
      env: {
        PORT: String(this.port),
        HOST: '127.0.0.1',
        TRELLIS_DATA_DIR: this.dataDir,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_LOG_LEVEL: 'silent',
        ...this.options.env,
      },
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      ...(this.options.signInProviders ? { signInProviders: this.options.signInProviders } : {}),
    });
    const { url } = await controlPlane.listen();
    this.controlPlane = controlPlane;
    this.url = url;
    this.port = Number(new URL(url).port);
    return this;
  }

  /** Stops the server as an operator would (streams end, connections close); `start()` brings it back. */
  async stop(): Promise<void> {
    await this.controlPlane?.close();
    this.controlPlane = null;
  }

  get useCases() {
    if (!this.controlPlane) throw new Error('the server is not running');
    return this.controlPlane.useCases;
  }

  /** `trellis_session=…` of the bootstrap admin, as the bootstrap sign-in link sets it. */
  async sessionCookie(): Promise<string> {
    return bootstrapSessionCookie(this.url, BOOTSTRAP_TOKEN);
  }

  /** A CLI client (bearer token) of the user with that email; the admin by default. */
  async userClient(email = ADMIN_EMAIL): Promise<TrellisClient> {
    const existing = this.clients.get(email);
    if (existing) return existing;
    const { access_token } = await cliTokensFor(this.useCases.auth, email);
    // The token stays valid across a restart: same secret, same database, same port.
    const client = new TrellisClient({ baseUrl: this.url, auth: { kind: 'bearer', accessToken: () => access_token } });
    this.clients.set(email, client);
    return client;
  }

  /** The bearer token of the user with that email, as `trellis login` keeps it (for the Terraform Cloud API). */
  async userToken(email = ADMIN_EMAIL): Promise<string> {
    return (await cliTokensFor(this.useCases.auth, email)).access_token;
  }

  /**
   * The organization `name`, made by `ownerEmail` through the use cases, with each of `members`
   * (`[email, role]`) an accepted member: the people and roles a test's pages are about.
   */
  async organization(
    name: string,
    ownerEmail: string,
    members: readonly (readonly [email: string, role: OrgRole])[] = [],
  ): Promise<{ orgId: string; owner: UserActor }> {
    const { useCases } = this;
    const ownerUser = await useCases.auth.ensureUser({ email: ownerEmail });
    const owner: UserActor = { userId: ownerUser.id, email: ownerUser.email };
    const orgId = (await useCases.orgs.create(owner, { name })).id;
    for (const [email, role] of members) {
      const person = await useCases.auth.ensureUser({ email });
      await addAcceptedMember(useCases, owner, orgId, { userId: person.id, email: person.email }, role);
    }
    return { orgId, owner };
  }

  /** An agent of `owner` (of the organization `orgId` when given), speaking with its worker credentials. */
  async agentClient(owner: TrellisClient, name = 'agent-1', orgId?: string): Promise<AgentClient> {
    const { worker_id, worker_token } = await owner.registerWorker({ name, ...(orgId ? { orgId } : {}) });
    const agent = new TrellisClient({
      baseUrl: this.url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    }) as AgentClient;
    agent.workerId = worker_id;
    return agent;
  }

  async close(): Promise<void> {
    await this.controlPlane?.close();
    this.controlPlane = null;
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** A vineyard holding one inline vine, for the user of `client` (testkit's fixture). */
export function vineyardWithVine(
  client: TrellisClient,
  name = 'web',
): Promise<{ vineyard: VineyardView; vine: VineView }> {
  return testkitVineyardWithVine(client, name);
}

export { INLINE_MAIN_TF as MAIN_TF } from '@trellis/testkit';
