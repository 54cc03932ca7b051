import { LoginStore, loginFilePath, TrellisApiError, TrellisClient, TrellisConnectionError } from '@trellis/client';
import { CredentialsFile, defaultCredentialsPath } from '../config/CredentialsFile.js';
import { AGENT_VERSION } from '../version.js';
import type { CliIo } from './main.js';

export interface RegisterFlags {
  name?: string | undefined;
  /** An organization (name or id): the agent joins its pool. */
  org?: string | undefined;
  url?: string | undefined;
  'credentials-file'?: string | undefined;
  force?: boolean | undefined;
}

/**
 * `trellis-agent register --name N [--org ORG]`: a new worker of the signed-in user (or of the
 * organization), its token kept in a 0600 file.
 */
export async function registerCommand(flags: RegisterFlags, io: CliIo): Promise<number> {
  const fail = (message: string, code = 3) => {
    io.stderr(`trellis-agent register: ${message}\n`);
    return code;
  };
  if (!flags.name) return fail('--name <name> is required', 2);
  const file = new CredentialsFile(flags['credentials-file'] ?? defaultCredentialsPath(io.env));
  if (file.exists() && !flags.force) {
    return fail(`${file.path} already holds an agent's credentials; pass --force to replace them`);
  }
  let server = flags.url ?? io.env.TRELLIS_URL;
  let accessToken = io.env.TRELLIS_TOKEN;
  if (!accessToken) {
    // The `trellis` CLI's login, refreshed (if it is about to expire) under the same lock and
    // with the same store as the CLI, so the two never present one refresh token twice.
    const store = new LoginStore(loginFilePath(io.env));
    const authPath = store.path;
    try {
      const login = await store.refresh((current) =>
        new TrellisClient({ baseUrl: current.server, userAgent: `trellis-agent/${AGENT_VERSION}` }).refreshTokens(
          current.refresh_token,
        ),
      );
      if (!login) return fail(`not signed in: run \`trellis login\` (or set TRELLIS_TOKEN)`);
      if (server && server.replace(/\/+$/, '') !== login.server.replace(/\/+$/, '')) {
        return fail(
          `the CLI is signed in to ${login.server}, not ${server}; run \`trellis login\` there or set TRELLIS_TOKEN`,
        );
      }
      server = login.server;
      accessToken = login.access_token;
    } catch (error) {
      return fail(`the CLI login in ${authPath} cannot be used: ${(error as Error).message}; run \`trellis login\``);
    }
  }
  if (!server) return fail('no control plane address: pass --url or set TRELLIS_URL');
  const token = accessToken;
  const client = new TrellisClient({
    baseUrl: server,
    auth: { kind: 'bearer', accessToken: () => token },
    userAgent: `trellis-agent/${AGENT_VERSION}`,
  });
  try {
    const org = flags.org === undefined ? null : await findOrg(client, flags.org);
    if (flags.org !== undefined && org === null) {
      return fail(`you belong to no organization named "${flags.org}" (\`trellis orgs list\` shows yours)`);
    }
    const registration = await client.registerAgent({
      name: flags.name,
      mode: 'self-hosted',
      ...(org ? { org_id: org.id } : {}),
    });
    file.write({
      server: client.baseUrl,
      worker_id: registration.worker_id,
      worker_token: registration.worker_token,
      name: flags.name,
      registered_at: new Date().toISOString(),
    });
    io.stdout(
      `Registered agent "${flags.name}"${org ? ` of the organization ${org.name}` : ''} (worker ${registration.worker_id}) at ${client.baseUrl}.\n` +
        `Credentials saved to ${file.path} (readable only by you).\n` +
        `Start it with: trellis-agent run${flags['credentials-file'] ? ` --credentials-file ${file.path}` : ''}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof TrellisApiError && error.status === 401) {
      return fail('the control plane refused the login; run `trellis login` again (or check TRELLIS_TOKEN)');
    }
    if (error instanceof TrellisApiError || error instanceof TrellisConnectionError) return fail(error.message);
    throw error;
  }
}

/** The organization named `nameOrId` among the caller's, or null. */
async function findOrg(client: TrellisClient, nameOrId: string): Promise<{ id: string; name: string } | null> {
  const wanted = nameOrId.toLowerCase();
  const orgs = await client.listOrgs();
  return orgs.find((org) => org.id === wanted || org.name.toLowerCase() === wanted) ?? null;
}
