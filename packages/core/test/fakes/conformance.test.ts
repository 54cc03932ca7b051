import {
  describeArtifactStoreConformance,
  describeStoreConformance,
  MemoryArtifactStore,
  MemoryUnitOfWork,
} from '@trellis/testkit/memory';

/** The fakes the core tests rely on pass the same suites as the SQL stores and the artifact adapters. */
describeStoreConformance('memory', async () => ({ uow: new MemoryUnitOfWork(), close: async () => {} }));
describeArtifactStoreConformance('memory', async () => ({ store: new MemoryArtifactStore(), close: async () => {} }));
