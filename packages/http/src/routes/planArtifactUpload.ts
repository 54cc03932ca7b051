import { PassThrough, type Readable } from 'node:stream';
import { MAX_PLAN_ARTIFACT_BYTES, TooLargeError, ValidationError } from '@trellis/core';
import busboy from 'busboy';
import type { Request } from 'express';

/**
 * The uploaded plan as a stream: the raw body for `application/octet-stream`, or the single
 * file part of a `multipart/form-data` body. A declared length over the limit is refused before
 * a byte is read; an undeclared one is cut off by the artifact store while streaming.
 */
export function planUploadBody(req: Request): AsyncIterable<Uint8Array> {
  const declared = Number(req.headers['content-length']);
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'multipart/form-data') {
    // Multipart framing adds a few hundred bytes around the file; the store enforces the exact limit.
    if (Number.isFinite(declared) && declared > MAX_PLAN_ARTIFACT_BYTES + 64 * 1024) throw tooLarge();
    return multipartFile(req);
  }
  if (type !== 'application/octet-stream') {
    throw new ValidationError(
      'upload the plan as application/octet-stream (or a multipart/form-data single file)',
      [{ path: 'content-type', message: 'must be application/octet-stream or multipart/form-data' }],
      'unsupported_media_type',
    );
  }
  if (Number.isFinite(declared) && declared > MAX_PLAN_ARTIFACT_BYTES) throw tooLarge();
  return req;
}

function tooLarge(): TooLargeError {
  return new TooLargeError(
    'artifact_too_large',
    `a plan artifact must be at most ${MAX_PLAN_ARTIFACT_BYTES} bytes`,
    MAX_PLAN_ARTIFACT_BYTES,
  );
}

async function* multipartFile(req: Request): AsyncIterable<Uint8Array> {
  const parser = busboy({ headers: req.headers, limits: { files: 1, fields: 10 } });
  const file = await new Promise<Readable>((resolve, reject) => {
    parser.once('file', (_name, stream) => resolve(stream));
    parser.once('error', reject);
    parser.once('close', () => reject(new ValidationError('the multipart body holds no file', [], 'missing_file')));
    req.pipe(parser);
  });
  // Re-wrap so an early stop (over the limit) ends the request stream too.
  const out = file.pipe(new PassThrough());
  try {
    for await (const chunk of out) yield chunk as Uint8Array;
  } finally {
    req.unpipe(parser);
    file.resume();
  }
}
