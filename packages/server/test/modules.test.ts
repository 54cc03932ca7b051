/**
 * Issue 24, features as modules: the composition root loops over one list (`MODULES`), whose
 * parts are the ones core, the API and the web interface use alone; a module's service is
 * replaced by its typed token, and the replacement is what the API calls.
 */
import { CORE_MODULES, coreServices, OrgUseCases, orgServices } from '@trellis/core';
import { FEATURE_ROUTES, REGISTRY_PROTOCOLS } from '@trellis/http';
import { MODULES, resolve, SERVER_SETTINGS } from '@trellis/server';
import { FEATURE_PAGES } from '@trellis/web';
import { instanceCachingFactory } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';

describe('the list of modules', () => {
  it('extends core’s modules, one entry each, in the same order', () => {
    expect(MODULES.map((module) => module.name)).toEqual(CORE_MODULES.map((module) => module.name));
    MODULES.forEach((module, index) => {
      expect(module.useCases).toBe(CORE_MODULES[index]?.useCases);
      expect(module.hooks).toBe(CORE_MODULES[index]?.hooks);
    });
  });

  it('serves every feature’s routes, pages and registry protocols, as the API and the web interface do alone', () => {
    expect(MODULES.flatMap((module) => (module.routes ? [module.routes] : []))).toEqual(Object.values(FEATURE_ROUTES));
    expect(MODULES.flatMap((module) => (module.pages ? [module.pages] : []))).toEqual(Object.values(FEATURE_PAGES));
    expect(MODULES.flatMap((module) => module.protocols ?? [])).toEqual(REGISTRY_PROTOCOLS);
  });

  it('names only rows of the settings table, each owned by one module at most', () => {
    const named = MODULES.flatMap((module) => module.settings);
    expect(named.filter((name) => !(name in SERVER_SETTINGS))).toEqual([]);
    expect(
      named.filter((name) => name !== 'retentionIntervalSeconds' && named.indexOf(name) !== named.lastIndexOf(name)),
    ).toEqual([]);
  });

  it('gives every use case of core one module and one token', () => {
    const keys = MODULES.flatMap((module) =>
      module.useCases.flatMap((provider) => (provider.key ? [provider.key] : [])),
    );
    expect(new Set(keys).size).toBe(keys.length);
    const ids = MODULES.flatMap((module) => module.useCases.map((provider) => provider.ref.id));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('createControlPlane({ overrides }): a module’s service replaced by its token', () => {
  let server: RunningControlPlane;
  const calls: string[] = [];

  beforeAll(async () => {
    server = await startControlPlane('sqlite', {
      overrides: (container) => {
        // The embedder wraps the organizations' use cases: every consumer gets the wrapper.
        container.register(orgServices.orgs.id, {
          useFactory: instanceCachingFactory((c) => {
            const original = new OrgUseCases(resolve(c, coreServices.deps));
            return new Proxy(original, {
              get(target, name, receiver) {
                if (name === 'create') calls.push('create');
                return Reflect.get(target, name, receiver);
              },
            });
          }),
        });
      },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is the one the use cases, the API and the web pages call', async () => {
    expect(server.controlPlane.useCases.orgs).toBe(resolve(server.controlPlane.container, orgServices.orgs));
    const user = await server.userClient('embedder@example.com');
    const org = await user.createOrg('wrapped');
    expect(org.name).toBe('wrapped');
    expect(calls).toEqual(['create']);
  });
});
