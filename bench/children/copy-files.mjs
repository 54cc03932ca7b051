/**
 * The "plain file copy" baseline of the upload scenario, in a process of its own so its RSS can be
 * watched like the server's: `node copy-files.mjs <src> <dst> [<src> <dst> ...]` copies every pair
 * at once as a stream pipe, fsyncs each copy before closing it (the artifact store fsyncs too),
 * and answers over IPC: it says `ready`, copies on `go`, and reports `{ seconds, bytes }`.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

const files = process.argv.slice(2);
const pairs = [];
for (let i = 0; i + 1 < files.length; i += 2) pairs.push([files[i], files[i + 1]]);

async function copy([source, target]) {
  // `flush: true` fsyncs the file before closing it.
  await pipeline(createReadStream(source), createWriteStream(target, { flush: true }));
  return (await stat(target)).size;
}

process.on('message', async (message) => {
  if (message !== 'go') return;
  const begin = performance.now();
  const sizes = await Promise.all(pairs.map(copy));
  const seconds = (performance.now() - begin) / 1000;
  process.send({ seconds, bytes: sizes.reduce((sum, size) => sum + size, 0) }, () => process.exit(0));
});
process.send('ready');
