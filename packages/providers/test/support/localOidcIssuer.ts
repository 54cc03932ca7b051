import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestBrowser } from './browser.js';

export interface TestAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

/**
 * A real OpenID Provider (the `oidc-provider` package) on loopback, with its development
 * interactions (login and consent forms) driven by `TestBrowser`. `listen()` binds the port first,
 * so the issuer URL is known before the relying party (and its redirect URI) exists.
 */
export class LocalOidcIssuer {
  readonly accounts = new Map<string, TestAccount>();

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
  ) {}

  static async listen(): Promise<LocalOidcIssuer> {
    const server = createServer((_req, res) => {
      res.statusCode = 503;
      res.end('not configured yet');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new LocalOidcIssuer(server, `http://127.0.0.1:${port}`);
  }

  /** Registers the one client and starts answering as the issuer. */
  async configure(client: { clientId: string; clientSecret: string; redirectUri: string }): Promise<void> {
    const { default: Provider } = await import('oidc-provider');
    const provider = new Provider(this.issuer, {
      clients: [
        {
          client_id: client.clientId,
          client_secret: client.clientSecret,
          redirect_uris: [client.redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      cookies: { keys: ['local-oidc-issuer-cookie-key'] },
      ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
      pkce: { required: () => true },
      findAccount: async (_ctx, id) => {
        const account = this.accounts.get(id);
        if (!account) return undefined;
        return { accountId: id, claims: async () => ({ sub: id, ...account }) };
      },
    });
    this.server.removeAllListeners('request');
    this.server.on('request', provider.callback());
  }

  /**
   * Signs `accountId` in at the issuer's authorization URL through the login and consent forms
   * (or cancels at the login form) and answers the URL the issuer sends the browser back to.
   */
  async authorize(
    browser: TestBrowser,
    authorizationUrl: string,
    accountId: string,
    options: { cancel?: boolean } = {},
  ): Promise<URL> {
    const atIssuer = (url: URL) => url.origin === new URL(this.issuer).origin;
    let { url, response } = await browser.follow(authorizationUrl, (next) => !atIssuer(next));
    for (let step = 0; step < 4 && response; step += 1) {
      const html = await response.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      if (!prompt) throw new Error(`unexpected page at the issuer (${response.status}): ${html.slice(0, 300)}`);
      if (options.cancel) {
        ({ url, response } = await browser.follow(`${url.href.replace(/\/$/, '')}/abort`, (next) => !atIssuer(next)));
        continue;
      }
      const form = new URLSearchParams({ prompt, ...(prompt === 'login' ? { login: accountId, password: 'x' } : {}) });
      ({ url, response } = await browser.follow(url, (next) => !atIssuer(next), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      }));
    }
    if (response) throw new Error(`the issuer did not send the browser back (${response.status})`);
    return url;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
