import { createTestCore, describeJobLifecycleConformance } from '@trellis/testkit/memory';

/** Every end reason's outbox rows and announcements, on the in-memory fakes (the SQL stores run some rows too). */
describeJobLifecycleConformance('memory', async (options) => ({
  core: createTestCore(options),
  close: async () => {},
}));
