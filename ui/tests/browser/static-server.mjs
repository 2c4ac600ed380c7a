import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

/** The CSP the Tauri app ships with, read from tauri.conf.json; served as a header so the test enforces it. */
const CONF = JSON.parse(readFileSync(new URL('../../../tauri.conf.json', import.meta.url), 'utf8'));
export const CSP = Object.entries(CONF.app.security.csp)
  .map(([directive, sources]) => `${directive} ${sources}`)
  .join('; ');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.json': 'application/json',
};

/**
 * Serve `root` on 127.0.0.1 at a free port. Every response carries the app's CSP unless the
 * page URL has `?nocsp` (used to prove the sanitizer alone stops injected handlers).
 */
export async function serveStatic(root) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let path = normalize(decodeURIComponent(url.pathname)).replace(/^([/\\])+/, '');
    if (path === '' || path.endsWith(sep)) path = join(path, 'index.html');
    const file = join(root, path);
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      const headers = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' };
      if (!url.searchParams.has('nocsp')) headers['content-security-policy'] = CSP;
      res.writeHead(200, headers).end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
