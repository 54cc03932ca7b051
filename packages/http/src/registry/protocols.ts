import { modulesProtocol } from './modules/modulesProtocol.js';
import { providersProtocol } from './providers/providersProtocol.js';
import type { RegistryProtocol } from './registryProtocols.js';

/**
 * Every protocol of the private registry the stock CLI speaks, mounted beside the Terraform Cloud
 * API (`tfeProtocol`) and listed in its discovery document.
 */
export const REGISTRY_PROTOCOLS: readonly RegistryProtocol[] = [modulesProtocol, providersProtocol];
