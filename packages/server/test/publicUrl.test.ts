/**
 * Nothing changes the settings after start-up. The one value settled later, once, is the public
 * URL when TRELLIS_WEB_URL is unset: this server at the port `listen()` bound, which the
 * configuration, notification links and the OIDC issuer then read.
 */
import { type CoreSettings, coreServices } from '@trellis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from '../src/index.js';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';

describe('a control plane with PORT=0 and no TRELLIS_WEB_URL', () => {
  let server: RunningControlPlane;
  beforeAll(async () => {
    server = await startControlPlane('sqlite');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('reads the public URL of the bound port everywhere, from frozen settings', async () => {
    const port = new URL(server.url).port;
    const bound = `http://localhost:${port}`;
    const { config, container } = server.controlPlane;
    expect(config.webUrl).toBe(bound);
    const settings = resolve(container, coreServices.settings) as CoreSettings;
    expect(settings.notifications.webUrl).toBe(bound);
    expect(settings.workloadIdentity.issuer).toBe(bound);
    const discovery = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as {
      issuer: string;
    };
    expect(discovery.issuer).toBe(bound);

    for (const frozen of [config, config.oidc, settings, settings.notifications, settings.workloadIdentity]) {
      expect(Object.isFrozen(frozen)).toBe(true);
    }
    expect(() => {
      (settings.notifications as { webUrl: string }).webUrl = 'https://elsewhere.example.com';
    }).toThrow(TypeError);
    expect(() => {
      (config as { webUrl: string }).webUrl = 'https://elsewhere.example.com';
    }).toThrow(TypeError);
    expect(server.controlPlane.config.webUrl).toBe(bound);
  });
});
