import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';

/** The package's `assets/` folder: beside `src/` and `dist/`, so both find it the same way. */
const ASSETS_DIR = fileURLToPath(new URL('../assets/', import.meta.url));

const FILES = {
  'trellis.css': 'text/css; charset=utf-8',
  'trellis.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
  'htmx.min.js': 'text/javascript; charset=utf-8',
  'htmx-sse.js': 'text/javascript; charset=utf-8',
} as const;

/**
 * Files served from a dependency rather than `assets/`: htmx (issue 29), which enhances the pages'
 * plain forms in place, and its SSE extension, which keeps the job lists' rows live; served from
 * our own origin like the page script (CSP `script-src 'self'`).
 */
const FROM_PACKAGES: Partial<Record<AssetName, string>> = {
  'htmx.min.js': createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'),
  'htmx-sse.js': createRequire(import.meta.url).resolve('htmx-ext-sse/dist/sse.min.js'),
};

type AssetName = keyof typeof FILES;

interface Asset {
  body: Buffer;
  type: string;
  /** A digest of the content: in the URL, so a new release is never served from an old cache. */
  version: string;
}

/** The stylesheet, the client scripts and the icon, read once and served from memory. */
export class Assets {
  private readonly files: Map<string, Asset>;

  constructor(dir = ASSETS_DIR) {
    this.files = new Map(
      (Object.entries(FILES) as [AssetName, string][]).map(([name, type]) => {
        const body = readFileSync(FROM_PACKAGES[name] ?? `${dir}/${name}`);
        return [name, { body, type, version: createHash('sha256').update(body).digest('hex').slice(0, 12) }];
      }),
    );
  }

  /** The URL of an asset under `base`, with its version. */
  url(base: string, name: AssetName): string {
    return `${base}/assets/${name}?v=${this.files.get(name)?.version}`;
  }

  /** `GET /assets/:name`. */
  handler(): RequestHandler {
    return (req, res, next) => {
      const asset = this.files.get(String(req.params.name));
      if (!asset) return next();
      res.setHeader('Content-Type', asset.type);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('ETag', `"${asset.version}"`);
      res.setHeader(
        'Cache-Control',
        req.query.v === asset.version ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
      if (req.headers['if-none-match'] === `"${asset.version}"`) {
        res.status(304).end();
        return;
      }
      res.send(asset.body);
    };
  }
}
