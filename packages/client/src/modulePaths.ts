/** A module of the registry: `<namespace>/<name>/<system>`. */
export interface ModuleAddress {
  namespace: string;
  name: string;
  system: string;
}
export type ModuleVersionAddress = ModuleAddress & { version: string };

/** The path parameters of a module's operations. */
export function moduleParams(address: ModuleAddress): ModuleAddress {
  return { namespace: address.namespace, name: address.name, system: address.system };
}

/** The path parameters of a module version's operations. */
export function moduleVersionParams(address: ModuleVersionAddress): ModuleVersionAddress {
  return { ...moduleParams(address), version: address.version };
}
