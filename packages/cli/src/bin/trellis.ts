#!/usr/bin/env node
import { runCli } from '../cli.js';

const code = await runCli(process.argv.slice(2));
// Output to a pipe is written asynchronously (a pager or a script may read it slowly): when some
// is still waiting, let it go out first (a reader that went away, EPIPE, ends the wait). Then
// exit at once: a prompt or an aborted stream may leave stdin or a socket open.
const waiting = [process.stdout, process.stderr].filter((stream) => stream.writableLength > 0);
if (waiting.length > 0) {
  await Promise.all(
    waiting.map(
      (stream) =>
        new Promise<unknown>((resolve) => {
          stream.on('error', resolve);
          stream.write('', resolve);
        }),
    ),
  );
}
process.exit(code);
