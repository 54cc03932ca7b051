// An existing express application that mounts the Trellis control plane under /trellis.
// Run from the repository root after `npm run build`: node examples/embed-express/server.mjs
import express from 'express';
import { createControlPlane } from '@trellis/server';

export async function startExample({ port = Number(process.env.PORT ?? 3000), env = process.env } = {}) {
  const app = express();

  // The host application's own routes.
  app.get('/', (_req, res) => {
    res.type('text/plain').send('my platform portal\n');
  });

  const server = await new Promise((resolve) => {
    const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
  });
  const origin = `http://127.0.0.1:${server.address().port}`;

  // Trellis, configured from the same environment variables as trellis-server. Its web origin is
  // the host app's origin; clients use http://host:port/trellis as their server URL.
  const trellis = await createControlPlane({ env: { TRELLIS_WEB_URL: origin, ...env } });
  app.use('/trellis', trellis.app);
  const close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await trellis.close();
  };
  return { server, trellis, close, url: origin };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { url, close, trellis } = await startExample();
  console.log(`portal on ${url}, Trellis API under ${url}/trellis/api`);
  if (trellis.config.bootstrapToken) {
    console.log(`sign in: ${url}/trellis/auth/bootstrap?token=${trellis.config.bootstrapToken}`);
  }
  process.once('SIGTERM', () => close().then(() => process.exit(0)));
  process.once('SIGINT', () => close().then(() => process.exit(0)));
}
