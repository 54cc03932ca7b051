/** A module of the registry: `<namespace>/<name>/<system>`. */
export interface ModuleAddress {
  namespace: string;
  name: string;
  system: string;
}
export type ModuleVersionAddress = ModuleAddress & { version: string };

export function modulePath(address: ModuleAddress, version?: string): string {
  const parts = [address.namespace, address.name, address.system, ...(version === undefined ? [] : [version])];
  return `/api/registry/modules/${parts.map(encodeURIComponent).join('/')}`;
}

/** A module's git repository (issue 28): beside the module's own paths. */
export function moduleRepositoryPath(address: ModuleAddress): string {
  const parts = [address.namespace, address.name, address.system];
  return `/api/registry/module-repositories/${parts.map(encodeURIComponent).join('/')}`;
}
