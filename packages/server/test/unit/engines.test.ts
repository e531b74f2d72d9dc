import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// Issue #27: README promises Node ≥ 20.19, so every installed package must accept it. An
// `engines.node` that excludes Node 20 is what `npm install` reports as EBADENGINE (cookie@2 and
// content-disposition@3 did; the root package.json's `overrides` hold them at versions for 20).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const promised = (
  JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    engines: { node: string };
  }
).engines.node;
const oldest = semver.minVersion(promised)!.version;

/** Every package directory under node_modules, nested ones and scoped ones included. */
function packages(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.name.startsWith('@') && e.isDirectory()) {
      packages(p, out);
      continue;
    }
    if (!e.isDirectory()) continue; // workspace links are our own packages, checked below
    if (existsSync(path.join(p, 'package.json'))) out.push(p);
    packages(path.join(p, 'node_modules'), out);
  }
  return out;
}

describe('dependencies run on the Node versions README promises (issue #27)', () => {
  it(`every installed package's engines.node admits Node ${oldest}, the Node running and the Dockerfile's`, () => {
    const dirs = [
      ...packages(path.join(root, 'node_modules')),
      ...readdirSync(path.join(root, 'packages')).map((p) => path.join(root, 'packages', p)),
    ];
    expect(dirs.length).toBeGreaterThan(300);
    // The oldest Node README promises, the one running (when a 20), and the Dockerfile's LTS.
    const docker = /^FROM node:(\d+)/m.exec(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
    const versions = [
      oldest,
      ...(semver.major(process.version) === 20 ? [process.version] : []),
      `${docker![1]}.0.0`,
    ];
    const refused: string[] = [];
    for (const dir of dirs) {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
        engines?: { node?: unknown };
      };
      const range = pkg.engines?.node;
      if (typeof range !== 'string' || range.trim() === '' || range === '*') continue;
      for (const v of versions)
        if (!semver.satisfies(v, range, { includePrerelease: true }))
          refused.push(`${pkg.name}@${pkg.version} (${path.relative(root, dir)}): node ${range}`);
    }
    expect(refused).toEqual([]);
  });

  it('the check notices an engines range that excludes Node 20', () => {
    expect(semver.satisfies(oldest, '>=22')).toBe(false);
    expect(semver.satisfies(oldest, promised)).toBe(true);
  });
});
