import { type FieldIssue, isConfigurationPath, MAX_INLINE_SOURCE_BYTES } from '@trellis/core';
import busboy from 'busboy';
import type { Request } from 'express';

/** The most files an upload may hold (each one a file row of the source). */
export const MAX_UPLOAD_FILES = 1000;
/** The most files a chosen directory may hold, configuration or not. */
export const MAX_UPLOAD_PARTS = 10_000;
/**
 * The most bytes a multipart form may hold. A chosen directory may hold more than the
 * configuration (a `.terraform/` of provider binaries): those files are read and dropped, up to this.
 */
export const MAX_MULTIPART_BYTES = 64 * 1024 * 1024;

/** A file of the upload: its path relative to the chosen directory, and its text. */
export interface UploadedFile {
  path: string;
  content: string;
}

/** A multipart form as read: its fields (a name given more than once: a list) and its upload. */
export interface MultipartForm {
  fields: Record<string, string | string[]>;
  files: UploadedFile[];
  /** Files of the directory that are no part of a configuration (`.terraform/`, state files…), left out. */
  skipped: number;
  /** What of the upload cannot make an inline source, with the same limits core applies to one. */
  issues: FieldIssue[];
}

export function isMultipart(req: Request): boolean {
  return /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');
}

/**
 * Reads the new-configuration form posted as `multipart/form-data` (it carries a directory chosen
 * with `<input type=file webkitdirectory multiple>`). The files of the input named `upload` become
 * the rows of an inline source: their paths relative to the chosen directory (the browser sends
 * `directory/sub/main.tf`), only the configuration's files (`isConfigurationPath`, as the CLI's
 * `--dir`), each UTF-8 text, at most `MAX_INLINE_SOURCE_BYTES` together. What breaks a limit is an
 * issue for the form to show, never an error page.
 */
export function readMultipartForm(req: Request): Promise<MultipartForm> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string | string[]> = {};
    const raw: { path: string; chunks: Buffer[]; truncated: boolean }[] = [];
    const issues: FieldIssue[] = [];
    let skipped = 0;
    let kept = 0;
    let tooMany = false;
    let tooManyParts = false;
    let tooManyFields = false;
    let overRequest = false;
    let overTotal = false;
    let received = 0;
    let finished = false;

    const parser = busboy({
      headers: req.headers,
      preservePath: true,
      limits: {
        // Files of the directory that are no part of the configuration count too (they are dropped unread).
        files: MAX_UPLOAD_PARTS,
        fields: 2000,
        fieldSize: MAX_INLINE_SOURCE_BYTES + 1024,
        fileSize: MAX_INLINE_SOURCE_BYTES + 1,
      },
    });
    const finish = () => {
      if (finished) return;
      finished = true;
      if (overRequest) {
        // The form was cut short: its files are not all here (nor the fields after them).
        issues.push({
          path: 'source.upload',
          message: `is more than ${MAX_MULTIPART_BYTES / 1024 / 1024} MiB with what is left out: choose the configuration's own directory (without .terraform/)`,
        });
        resolve({ fields, files: [], skipped, issues });
        return;
      }
      // Over the limit, files were cut short: only the limit is said.
      const files = overTotal ? [] : decodeFiles(raw, issues);
      if (tooManyParts) {
        issues.push({
          path: 'source.upload',
          message: `holds more than ${MAX_UPLOAD_PARTS} files: choose the configuration's own directory`,
        });
      }
      if (tooManyFields) issues.push({ path: 'source', message: 'the form holds too many rows' });
      if (tooMany) {
        issues.push({ path: 'source.upload', message: `holds more than ${MAX_UPLOAD_FILES} configuration files` });
      }
      const total = files.reduce((sum, file) => sum + Buffer.byteLength(file.content, 'utf8'), 0);
      if (overTotal || total > MAX_INLINE_SOURCE_BYTES) {
        issues.push({
          path: 'source.upload',
          message: `holds more than ${MAX_INLINE_SOURCE_BYTES} bytes of configuration, the limit of files sent inline: use a Git repository`,
        });
      }
      resolve({ fields, files: issues.length > 0 ? [] : files, skipped, issues });
    };

    parser.on('field', (name, value) => {
      const before = fields[name];
      if (before === undefined) fields[name] = value;
      else fields[name] = Array.isArray(before) ? [...before, value] : [before, value];
    });
    parser.on('file', (name, stream, info) => {
      const path = (info.filename ?? '').replace(/\\/g, '/');
      // An empty input sends one part with no file name.
      if (name !== 'upload' || path === '') {
        stream.resume();
        return;
      }
      if (!isConfigurationPath(withoutTopDirectory(path))) {
        skipped += 1;
        stream.resume();
        return;
      }
      if (kept >= MAX_UPLOAD_FILES || overTotal) {
        tooMany ||= kept >= MAX_UPLOAD_FILES;
        stream.resume();
        return;
      }
      kept += 1;
      const file = { path, chunks: [] as Buffer[], truncated: false };
      raw.push(file);
      stream.on('data', (chunk: Buffer) => {
        if (overTotal) return;
        file.chunks.push(chunk);
      });
      stream.on('limit', () => {
        file.truncated = true;
        overTotal = true;
      });
    });
    parser.on('filesLimit', () => {
      tooManyParts = true;
    });
    parser.on('fieldsLimit', () => {
      tooManyFields = true;
    });
    parser.on('close', finish);
    parser.on('error', (error) => {
      if (!finished) reject(error);
    });

    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_MULTIPART_BYTES && !finished) {
        // Stop reading what could never be sent; the form comes back with the issue.
        req.unpipe(parser);
        req.resume();
        overRequest = true;
        finish();
      }
    });
    req.pipe(parser);
  });
}

/**
 * The browser names a directory's file `chosen/sub/main.tf`: the source's paths are relative to
 * the chosen directory, so its name goes when every file is under it. Files chosen one by one
 * keep their names.
 */
function withoutTopDirectory(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(slash + 1);
}

function decodeFiles(raw: { path: string; chunks: Buffer[] }[], issues: FieldIssue[]): UploadedFile[] {
  const tops = new Set(raw.map((file) => (file.path.includes('/') ? file.path.slice(0, file.path.indexOf('/')) : '')));
  const strip = tops.size === 1 && !tops.has('');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const files: UploadedFile[] = [];
  for (const file of raw) {
    const path = strip ? withoutTopDirectory(file.path) : file.path;
    try {
      files.push({ path, content: decoder.decode(Buffer.concat(file.chunks)) });
    } catch {
      issues.push({ path: 'source.upload', message: `${path} is not UTF-8 text: only text files are sent inline` });
    }
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
