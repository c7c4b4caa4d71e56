import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Ctx } from './middleware/context.js';

/** Where the Developer page is served (docs/reference.md section 10). */
export const ADMIN_PAGE_BASE = '/admin';

/** What `npm run build:web` writes (and `npm start` runs first). */
export const ADMIN_PAGE_DIR = join(import.meta.dirname, '..', '..', 'build', 'admin');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Everything from this origin, nothing inline, no frames: a script injected into a page could
 * neither run nor send anything elsewhere.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const body = readFileSync(join(dir, name));
    assets.set(name, { type, body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

export const isAdminPage = (path: string) => path === ADMIN_PAGE_BASE || path.startsWith(`${ADMIN_PAGE_BASE}/`);

/**
 * Serves the built Developer page from memory: `/admin/` is its one HTML document (the page
 * routes with the URL's fragment), the rest its script and style sheet, gzipped when the
 * browser accepts it, revalidated by ETag. Read once at start-up; until the page is built,
 * every path answers 503 saying how to build it.
 */
export function adminPage(dir = ADMIN_PAGE_DIR) {
  const assets = loadAssets(dir);
  const route = `${ADMIN_PAGE_BASE}/*`;
  return (ctx: Ctx) => {
    ctx.state.route = route;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      return;
    }
    if (ctx.path === ADMIN_PAGE_BASE) {
      ctx.redirect(`${ADMIN_PAGE_BASE}/`);
      return;
    }
    if (assets.size === 0) {
      ctx.status = 503;
      ctx.type = 'text/plain';
      ctx.body = 'The Developer page is not built: run `npm run build:web` (npm start does it first).\n';
      return;
    }
    const name = ctx.path.slice(ADMIN_PAGE_BASE.length + 1) || 'index.html';
    const asset = assets.get(name);
    if (asset === undefined) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'Not found.\n';
      return;
    }
    ctx.set(SECURITY_HEADERS);
    // The document is checked every time (a sign-out must not be shown again from a cache); the rest by ETag.
    ctx.set('Cache-Control', name === 'index.html' ? 'no-store' : 'no-cache');
    ctx.set('ETag', asset.etag);
    ctx.vary('Accept-Encoding');
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = asset.gzip;
    } else {
      ctx.body = asset.body;
    }
  };
}
