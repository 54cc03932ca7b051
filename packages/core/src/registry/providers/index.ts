export * from './GpgKeyUseCases.js';
export * from './module.js';
export * from './ports.js';
export * from './records.js';
export * from './RegistryProviderUseCases.js';
