export * from './stores/index.js';
export * from './artifactStore.js';
export * from './rateLimitStore.js';
export * from './jobLifecycle/index.js';
