import type { TrellisClient } from '@trellis/client';
import { personalNamespace } from '@trellis/core';
import { Option } from 'clipanion';

/** `--namespace`, `--name`, `--system`: a module of the registry (the namespace defaults to yours). */
export const namespaceOption = () =>
  Option.String('--namespace', {
    description: 'An organization you belong to (by name); default: your personal namespace',
  });
export const nameOption = () => Option.String('--name', { required: true, description: 'The module name, e.g. vpc' });
export const systemOption = () =>
  Option.String('--system', {
    required: true,
    description: "The module's target system (its main provider), e.g. aws",
  });

/** The namespace given, or the person's own (`u-…`). */
export async function namespaceOf(client: TrellisClient, given: string | undefined): Promise<string> {
  if (given !== undefined) return given;
  return personalNamespace((await client.whoami()).id);
}

/** How a module is named in a source address: `<namespace>/<name>/<system>`. */
export function moduleLabel(address: { namespace: string; name: string; system: string }): string {
  return `${address.namespace}/${address.name}/${address.system}`;
}
