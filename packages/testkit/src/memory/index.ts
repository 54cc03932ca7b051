export * from './builders.js';
export * from './createTestCore.js';
export * from './FakeClock.js';
export * from './FakeProviders.js';
export * from './FakeRandom.js';
export * from './FakeTokenSigner.js';
export * from './FakeUpstreamRegistry.js';
export * from './FakeWebhookSender.js';
export * from './ManualTicker.js';
export * from './RecordingVcsApi.js';
export * from './MemoryArtifactStore.js';
export * from './MemoryEventBus.js';
export {
  emptyMemoryState,
  type MemoryState,
  outboxRows,
  type StoredComponents,
  type StoredLogChunk,
} from './MemoryState.js';
export * from './MemoryTransaction.js';
export * from './MemoryUnitOfWork.js';
export * from './stores/index.js';
export * from './streams.js';
