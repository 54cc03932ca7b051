import { askingFirst } from '../confirmation.js';
import { MAX_GPG_KEY_BYTES, MAX_PAGE_LIMIT, NotFoundError, type UserActor } from '@trellis/core';
import express, { type Router } from 'express';
import type { FormProblem } from '../orgs/orgPages.js';
import { formField, formProblem, type PageContext, Redirect, type WebRouteDeps } from '../routing.js';
import { gpgKeysPage, type ProviderEntry, providersPage } from './providerPages.js';
import { chooseNamespace, tabHref } from './registryNav.js';

/** Providers a page lists at once (the API's default page). */
const PROVIDERS_PER_PAGE = 50;

/**
 * A pasted armored key is larger than the 4 KiB other forms take (an RSA key is several KiB): room
 * for core's own limit (`MAX_GPG_KEY_BYTES`) once form-encoded, so core says what is wrong with a
 * key too large. Parsed before `sameOriginForm`, whose parser then has nothing left to read; the
 * Origin is still checked before anything is done with it.
 */
const keyForm = express.urlencoded({ extended: false, limit: 4 * MAX_GPG_KEY_BYTES });

/**
 * The registry's providers and the namespaces' GPG keys (issue 28): the pages read through the
 * same use cases as the API; deleting a version and adding or deleting a key are forms, refused
 * by the use cases to anyone but the namespace's admins.
 */
export function providerRoutes(router: Router, deps: WebRouteDeps): void {
  /** A namespace's providers: `?namespace=`, or the one a refused form named (then from the first page). */
  const showProviders = async (context: PageContext, refused?: { namespace: string; problem: FormProblem }) => {
    const { req, user, base, now, standing } = context;
    const roles = await standing();
    const choice = chooseNamespace(refused?.namespace ?? req.query.namespace, user, roles);
    const asked = refused ? undefined : req.query.after;
    const after = typeof asked === 'string' && asked !== '' ? asked : null;
    const page = await deps.useCases.registryProviders.list(user, choice.namespace, PROVIDERS_PER_PAGE, after);
    const providers: ProviderEntry[] = [];
    for (const provider of page.providers) {
      providers.push({
        ...provider,
        versions: await deps.useCases.registryProviders.versions(user, choice.namespace, provider.type),
      });
    }
    return providersPage({
      base,
      host: req.get('host') ?? 'localhost',
      choice,
      providers,
      next: page.next,
      mayManage: choice.ownerId !== null && roles.may(choice.ownerId, 'registry.manage'),
      now,
      problem: refused?.problem ?? null,
    });
  };

  router.get(
    '/registry/providers',
    deps.headers,
    deps.signedIn((context) => showProviders(context)),
  );

  router.post(
    '/registry/providers/:namespace/:type/:version/delete',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(
      askingFirst(
        ({ req }) => ({
          title: `Delete version ${req.params.version}`,
          question: `Delete ${req.params.namespace}/${req.params.type} ${req.params.version} and its zips? Configurations that need it can no longer init.`,
          button: 'Delete',
          back: tabHref('', 'providers', String(req.params.namespace)),
          section: 'registry',
        }),
        async (context) => {
          const namespace = String(context.req.params.namespace);
          const { type, version } = context.req.params;
          try {
            await deps.useCases.registryProviders.deleteVersion(context.user, namespace, type, version);
          } catch (error) {
            if (error instanceof NotFoundError) throw error;
            return showProviders(context, { namespace, problem: formProblem(error) });
          }
          return new Redirect(tabHref('', 'providers', namespace));
        },
      ),
    ),
  );

  /** A namespace's keys: `?namespace=`, or the one a refused form named, with what was typed in it. */
  const showKeys = async (
    context: PageContext,
    refused?: { namespace: string; problem: FormProblem; typed?: string },
  ) => {
    const { req, user, base, now, standing } = context;
    const roles = await standing();
    const choice = chooseNamespace(refused?.namespace ?? req.query.namespace, user, roles);
    const keys = await deps.useCases.gpgKeys.list(user, choice.namespace);
    return gpgKeysPage({
      base,
      choice,
      keys,
      people: await peopleOf(deps, user, choice.ownerId),
      mayManage: choice.ownerId !== null && roles.may(choice.ownerId, 'registry.manage'),
      now,
      problem: refused?.problem ?? null,
      ...(refused?.typed !== undefined ? { typed: refused.typed } : {}),
    });
  };

  router.get(
    '/registry/gpg-keys',
    deps.headers,
    deps.signedIn((context) => showKeys(context)),
  );

  router.post(
    '/registry/gpg-keys/:namespace',
    deps.headers,
    keyForm,
    ...deps.sameOriginForm,
    deps.signedIn(async (context) => {
      const namespace = String(context.req.params.namespace);
      const armor = formField(context.req, 'ascii_armor');
      try {
        await deps.useCases.gpgKeys.add(context.user, namespace, armor);
      } catch (error) {
        if (error instanceof NotFoundError) throw error;
        return showKeys(context, { namespace, problem: formProblem(error), typed: armor ?? '' });
      }
      return new Redirect(tabHref('', 'gpg-keys', namespace));
    }),
  );

  router.post(
    '/registry/gpg-keys/:namespace/:keyId/delete',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(
      askingFirst(
        ({ req }) => ({
          title: `Delete key ${req.params.keyId}`,
          question: `Delete key ${req.params.keyId}? Versions it signed stay published, but tofu init can no longer verify them.`,
          button: 'Delete',
          back: tabHref('', 'gpg-keys', String(req.params.namespace)),
          section: 'registry',
        }),
        async (context) => {
          const namespace = String(context.req.params.namespace);
          const keyId = String(context.req.params.keyId);
          try {
            await deps.useCases.gpgKeys.delete(context.user, namespace, keyId);
          } catch (error) {
            if (error instanceof NotFoundError) throw error;
            return showKeys(context, { namespace, problem: formProblem(error) });
          }
          return new Redirect(tabHref('', 'gpg-keys', namespace));
        },
      ),
    ),
  );
}

/**
 * Who may have added a key or pushed an archive: the person, in their own namespace; an
 * organization's members (a person who left is no longer named).
 */
export async function peopleOf(
  deps: WebRouteDeps,
  user: UserActor,
  ownerId: string | null,
): Promise<Map<string, string>> {
  const people = new Map<string, string>([[user.userId, user.email]]);
  if (ownerId === null || ownerId === user.userId) return people;
  let cursor: string | undefined;
  do {
    const page = await deps.useCases.orgs.listMembers(user, ownerId, { limit: MAX_PAGE_LIMIT, cursor });
    for (const member of page.items) if (member.user_id !== null) people.set(member.user_id, member.email);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return people;
}
