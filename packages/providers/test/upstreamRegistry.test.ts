import { HttpUpstreamRegistry } from '@trellis/providers';
import { describe, expect, it } from 'vitest';

interface Seen {
  url: string;
  authorization: string | null;
  redirect: RequestRedirect | undefined;
}

/** A fetch answering from `routes` (by URL without query), recording each request. */
function fakeFetch(routes: Record<string, () => Response>, seen: Seen[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    seen.push({ url: url.href, authorization: headers.get('authorization'), redirect: init?.redirect });
    const route = routes[`${url.origin}${url.pathname}`];
    return route ? route() : new Response('not found', { status: 404 });
  };
}

const json = (body: unknown) => () => Response.json(body);
const NULL = { hostname: 'registry.example.com', namespace: 'acme', type: 'null' };

const ROUTES = {
  'https://registry.example.com/.well-known/terraform.json': json({ 'providers.v1': '/v1/providers/' }),
  'https://registry.example.com/v1/providers/acme/null/versions': json({
    versions: [{ version: '1.0.0', protocols: ['5.0'], platforms: [{ os: 'linux', arch: 'amd64' }] }],
  }),
  'https://registry.example.com/v1/providers/acme/null/1.0.0/download/linux/amd64': json({
    filename: 'terraform-provider-null_1.0.0_linux_amd64.zip',
    download_url: 'https://releases.example.net/null.zip?grant=secret-grant',
    shasum: 'A'.repeat(64),
    shasums_url: '/files/SHA256SUMS',
    shasums_signature_url: 'https://releases.example.net/SHA256SUMS.sig',
    signing_keys: { gpg_public_keys: [{ ascii_armor: '-----BEGIN PGP PUBLIC KEY BLOCK-----' }] },
  }),
  'https://registry.example.com/files/SHA256SUMS': () => new Response('sums'),
  'https://releases.example.net/null.zip': () => new Response('zip bytes'),
};

describe('HttpUpstreamRegistry (the provider registry protocol, for the mirror pull-through)', () => {
  it("finds the registry by discovery and sends the host's token to that host only", async () => {
    const seen: Seen[] = [];
    const upstream = new HttpUpstreamRegistry({
      hosts: ['registry.example.com'],
      tokens: { 'Registry.Example.com': 'the-token' },
      fetch: fakeFetch(ROUTES, seen),
    });
    expect(await upstream.versions(NULL)).toEqual([{ version: '1.0.0', platforms: [{ os: 'linux', arch: 'amd64' }] }]);
    const download = await upstream.download(NULL, '1.0.0', 'linux', 'amd64');
    expect(download).toEqual({
      filename: 'terraform-provider-null_1.0.0_linux_amd64.zip',
      download_url: 'https://releases.example.net/null.zip?grant=secret-grant',
      shasum: 'a'.repeat(64),
      shasums_url: 'https://registry.example.com/files/SHA256SUMS',
      shasums_signature_url: 'https://releases.example.net/SHA256SUMS.sig',
      signing_keys: ['-----BEGIN PGP PUBLIC KEY BLOCK-----'],
    });
    expect(Buffer.from(await upstream.file(download?.shasums_url as string, 100)).toString()).toBe('sums');
    let body = '';
    for await (const chunk of await upstream.archive(download?.download_url as string)) body += Buffer.from(chunk);
    expect(body).toBe('zip bytes');
    // Discovery once; the token with the registry's JSON requests, and never a redirect followed with it.
    expect(seen.filter((each) => each.url.endsWith('terraform.json'))).toHaveLength(1);
    for (const each of seen) {
      const registry = each.url.startsWith('https://registry.example.com/') && !each.url.includes('/files/');
      expect(each.authorization, each.url).toBe(registry ? 'Bearer the-token' : null);
      if (registry) expect(each.redirect).toBe('manual');
    }
  });

  it('contacts no host that is not listed, and no URL that is not https', async () => {
    const seen: Seen[] = [];
    const upstream = new HttpUpstreamRegistry({ hosts: ['registry.example.com'], fetch: fakeFetch(ROUTES, seen) });
    await expect(upstream.versions({ ...NULL, hostname: 'evil.example.org' })).rejects.toMatchObject({
      code: 'mirror_upstream_unavailable',
    });
    await expect(upstream.archive('http://releases.example.net/null.zip')).rejects.toMatchObject({
      code: 'mirror_upstream_unavailable',
    });
    expect(seen).toEqual([]);
  });

  it('answers a missing provider as none, and an error, a non-JSON answer or a large file as unavailable, without the query', async () => {
    const seen: Seen[] = [];
    const upstream = new HttpUpstreamRegistry({
      hosts: ['registry.example.com'],
      fetch: fakeFetch(
        {
          ...ROUTES,
          'https://registry.example.com/v1/providers/acme/broken/versions': () => new Response('oops', { status: 500 }),
          'https://registry.example.com/v1/providers/acme/html/versions': () => new Response('<html>'),
        },
        seen,
      ),
    });
    expect(await upstream.versions({ ...NULL, type: 'missing' })).toEqual([]);
    expect(await upstream.download(NULL, '9.9.9', 'linux', 'amd64')).toBeNull();
    await expect(upstream.versions({ ...NULL, type: 'broken' })).rejects.toThrow(/answered 500/);
    await expect(upstream.versions({ ...NULL, type: 'html' })).rejects.toMatchObject({
      code: 'mirror_upstream_unavailable',
    });
    const large = upstream.file('https://releases.example.net/null.zip?grant=secret-grant', 4);
    await expect(large).rejects.toThrow(/larger than 4 bytes/);
    await expect(large).rejects.not.toThrow(/secret-grant/);
  });
});
