/** A body for `ArtifactStore.put` or a plan upload: `data` in chunks of `chunkSize` bytes. */
export async function* bodyOf(data: Uint8Array | string, chunkSize = 64 * 1024): AsyncGenerator<Uint8Array> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  for (let offset = 0; offset < bytes.length; offset += chunkSize) {
    yield bytes.subarray(offset, Math.min(offset + chunkSize, bytes.length));
  }
}

/** `size` bytes of `fill` produced lazily, so a test of a size limit never builds the whole body. */
export async function* filledBody(size: number, chunkSize = 1024 * 1024, fill = 0x61): AsyncGenerator<Uint8Array> {
  let left = size;
  while (left > 0) {
    const n = Math.min(chunkSize, left);
    yield Buffer.alloc(n, fill);
    left -= n;
  }
}

/** Everything a stream yields, as one buffer. */
export async function readAll(stream: AsyncIterable<Uint8Array | string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
