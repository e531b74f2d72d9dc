import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, dbDescribe, expectError, type Harness } from '../helpers/harness.js';

// D55: the web app served at / on the API's origin, with a strict CSP; hashed assets cached
// for good, index.html revalidated; client-side routes answered with the app; the server's own
// paths keep their D2/D5 404 and 405; without a build, a D5 503 that says how to build.

const INDEX =
  '<!doctype html><html><head><script type="module" src="/assets/index-AbC123.js"></script>' +
  '<link rel="stylesheet" href="/assets/index-DeF456.css"></head><body><div id="app"></div>' +
  '</body></html>';
const JS = `console.log(${JSON.stringify('x'.repeat(4000))});`;

dbDescribe('web app serving (D55)', () => {
  let h: Harness;
  let bare: Harness;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-web-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), INDEX);
    writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), JS);
    writeFileSync(path.join(dir, 'assets', 'index-DeF456.css'), 'body{color:red}');
    writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    h = await createHarness({ webDir: dir });
    bare = await createHarness({ webDir: path.join(dir, 'missing') });
  });
  afterAll(async () => {
    await h?.close();
    await bare?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const csp = (v: unknown): Map<string, string> =>
    new Map(
      String(v)
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...rest]) => [k ?? '', rest.join(' ')]),
    );

  it('/ answers index.html with a strict CSP (no inline script), no-cache and an ETag', async () => {
    const r = await h.request({ method: 'GET', url: '/' });
    expect(r.status).toBe(200);
    expect(r.raw).toBe(INDEX);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    const policy = csp(r.headers['content-security-policy']);
    expect(policy.get('default-src')).toBe("'self'");
    expect(policy.get('script-src')).toBe("'self'"); // no 'unsafe-inline', no other origin
    expect(policy.get('img-src')).toBe("'self' blob: data:");
    expect(policy.get('media-src')).toBe("'self' blob:");
    expect(policy.get('connect-src')).toBe("'self' ws://parley.test"); // the gateway (D1)
    expect(policy.get('object-src')).toBe("'none'");
    expect(policy.get('frame-ancestors')).toBe("'none'");
    const etag = String(r.headers['etag']);
    const again = await h.request({ method: 'GET', url: '/', headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.raw).toBe('');
  });

  it('hashed assets are immutable for a year, with their type, gzipped when asked', async () => {
    const js = await h.request({ method: 'GET', url: '/assets/index-AbC123.js' });
    expect(js.status).toBe(200);
    expect(js.raw).toBe(JS);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const css = await h.request({ method: 'GET', url: '/assets/index-DeF456.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');

    const gz = await h.app.inject({
      method: 'GET',
      url: '/assets/index-AbC123.js',
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['vary']).toBe('accept-encoding');
    expect(gz.rawPayload.length).toBeLessThan(JS.length / 10);
    expect(gunzipSync(gz.rawPayload).toString()).toBe(JS);
  });

  it('client-side routes and root files answer the app; missing assets are 404', async () => {
    for (const url of ['/login', '/invite/abcDEF12', '/g/12/34', '/bots/5?tab=log', '/apple']) {
      const r = await h.request({ method: 'GET', url });
      expect(r.status, url).toBe(200);
      expect(r.raw, url).toBe(INDEX);
      expect(r.headers['content-security-policy'], url).toContain("default-src 'self'");
    }
    const head = await h.request({ method: 'HEAD', url: '/settings' });
    expect(head.status).toBe(200);
    const icon = await h.request({ method: 'GET', url: '/favicon.svg' });
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');

    for (const url of ['/assets/nope.js', '/assets/..%2F..%2Fpackage.json', '/assets/.hidden']) {
      expectError(await h.request({ method: 'GET', url }), 404, 'NOT_FOUND', url);
    }
  });

  it("the server's own paths keep their 404/405 in the D5 form (D2)", async () => {
    for (const url of [
      '/api',
      '/api/v1/nope',
      '/app/v1/nope',
      '/admin/v1/nope',
      '/cdn/nope.png',
      '/gateway/x',
      '/docs/nope/deeper',
      '/healthz/x',
      // /readyz and /metrics are real routes now (D53); below them nothing is the app's.
      '/readyz/x',
      '/metrics/x',
    ]) {
      const r = await h.request({ method: 'GET', url });
      expect([404, 405], url).toContain(r.status);
      expect(r.body.error.code, url).toMatch(/^(NOT_FOUND|METHOD_NOT_ALLOWED)$/);
      expect(String(r.headers['content-type']), url).toContain('application/json');
    }
    // Not a GET: the app is not an answer.
    expectError(await h.request({ method: 'POST', url: '/login' }), 404, 'NOT_FOUND');
    const wrong = await h.request({ method: 'DELETE', url: '/' });
    expectError(wrong, 405, 'METHOD_NOT_ALLOWED');
  });

  it('without a build: / and client routes answer 503 in the D5 form saying how to build', async () => {
    for (const url of ['/', '/login', '/g/1/2']) {
      const r = await bare.request({ method: 'GET', url });
      expectError(r, 503, 'SERVICE_UNAVAILABLE', url);
      expect(r.body.error.message).toContain('npm run build -w @parley/web');
    }
    expectError(
      await bare.request({ method: 'GET', url: '/assets/index-AbC123.js' }),
      404,
      'NOT_FOUND',
    );
    // The API is unaffected.
    expect((await bare.request({ method: 'GET', url: '/healthz' })).status).toBe(200);
  });
});
