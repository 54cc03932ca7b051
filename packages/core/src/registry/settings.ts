/** Settings of the private registry (issue 28). */
export interface RegistrySettings {
  /** A module's tarball is at most this many bytes, packed (`413 module_too_large`). */
  moduleMaxBytes: number;
  /** A provider's zip is at most this many bytes (`413 provider_zip_too_large`). */
  providerMaxBytes: number;
}

export const DEFAULT_REGISTRY_SETTINGS: RegistrySettings = {
  moduleMaxBytes: 100 * 1024 * 1024,
  providerMaxBytes: 512 * 1024 * 1024,
};
