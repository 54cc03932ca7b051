/**
 * A GitHub stand-in on loopback for sign-ins (issue 23's tests): the OAuth app's authorize and
 * token endpoints at `<url>/login/oauth/*` and the REST API at `<url>/api/v3` (`/user`,
 * `/user/emails`, `/user/repos`), as GitHub Enterprise lays them out, so the server's real GitHub
 * provider signs people in with `TRELLIS_GITHUB_BASE_URL=<url>`. Which account signs in is the
 * test's choice (`authorize(…, login)`), as a person typing their password would be.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHubAccount {
  id: number;
  login: string;
  email: string;
  repositories: string[];
}

export class GitHubStandIn {
  readonly accounts = new Map<string, GitHubAccount>();
  /** Every API request, with the token it carried. */
  readonly requests: { path: string; token: string | null }[] = [];
  private readonly codes = new Map<string, string>();
  private readonly tokens = new Map<string, string>();
  private nextId = 1000;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async listen(): Promise<GitHubStandIn> {
    let standIn: GitHubStandIn | null = null;
    const server = createServer((req, res) => {
      standIn?.handle(req, res).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    standIn = new GitHubStandIn(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return standIn;
  }

  add(login: string, repositories: string[] = []): GitHubAccount {
    const account = { id: this.nextId++, login, email: `${login}@example.test`, repositories };
    this.accounts.set(login, account);
    return account;
  }

  /** Where GitHub sends the browser back after `login` approved the authorization URL. */
  authorize(authorizationUrl: string, login: string): string {
    const url = new URL(authorizationUrl);
    if (`${url.origin}${url.pathname}` !== `${this.url}/login/oauth/authorize`) {
      throw new Error(`not this stand-in's authorization URL: ${authorizationUrl}`);
    }
    const code = randomBytes(12).toString('hex');
    this.codes.set(code, login);
    const back = new URL(url.searchParams.get('redirect_uri') as string);
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') as string);
    return back.href;
  }

  close(): Promise<void> {
    return new Promise((done) => {
      this.server.closeAllConnections();
      this.server.close(() => done());
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const login = this.codes.get(new URLSearchParams(body).get('code') ?? '');
      if (!login) return json(200, { error: 'bad_verification_code' });
      const token = `gho_${randomBytes(16).toString('hex')}`;
      this.tokens.set(token, login);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'repo,read:user,user:email' });
    }
    const token = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? null;
    this.requests.push({ path: url.pathname, token });
    const account = this.accounts.get(this.tokens.get(token ?? '') ?? '');
    if (!account) return json(401, { message: 'Bad credentials' });
    switch (url.pathname) {
      case '/api/v3/user':
        return json(200, { id: account.id, login: account.login, name: account.login });
      case '/api/v3/user/emails':
        return json(200, [{ email: account.email, primary: true, verified: true }]);
      case '/api/v3/user/repos':
        return json(
          200,
          account.repositories.map((fullName, index) => ({
            id: index + 1,
            name: fullName.split('/')[1],
            full_name: fullName,
            private: true,
            clone_url: `https://github.example/${fullName}.git`,
            html_url: `https://github.example/${fullName}`,
            default_branch: 'main',
            updated_at: '2024-01-01T00:00:00Z',
          })),
        );
      default:
        return json(404, { message: 'Not Found' });
    }
  }
}
