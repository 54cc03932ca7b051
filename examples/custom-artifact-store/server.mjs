// The Trellis control plane with the artifact store of store.mjs instead of the one
// TRELLIS_ARTIFACTS_URL names. Run from the repository root after `npm run build`:
//   node examples/custom-artifact-store/server.mjs
import { createControlPlane } from '@trellis/server';
import { MapArtifactStore } from './store.mjs';

export async function startExample({ env = process.env, artifactStore = new MapArtifactStore() } = {}) {
  // Any port of core can be replaced this way (`eventBus`, `clock`, ...), before anything is built.
  const trellis = await createControlPlane({ env, register: { artifactStore } });
  const { url } = await trellis.listen();
  return { trellis, url, artifactStore };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { trellis, url } = await startExample();
  console.log(`Trellis control plane on ${url}, plans and states in memory`);
  if (trellis.config.bootstrapToken)
    console.log(`sign in: ${url}/auth/bootstrap?token=${trellis.config.bootstrapToken}`);
  process.once('SIGTERM', () => trellis.close().then(() => process.exit(0)));
  process.once('SIGINT', () => trellis.close().then(() => process.exit(0)));
}
