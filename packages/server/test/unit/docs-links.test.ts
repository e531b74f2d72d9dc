import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Issue 14: the repository stands alone. Every relative link of README.md and docs/*.md resolves
// inside the repository (anchors included), and every decision cited anywhere — code, docs,
// OpenAPI summaries, CLI help — has its anchor in docs/protocol.md.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const MARKDOWN = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(m[1]!);
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) out.add(slug(m[1]!));
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory())
      return name === 'node_modules' || name === 'dist' ? [] : sourceFiles(p);
    return /\.(ts|mjs|js)$/.test(name) ? [p] : [];
  });
}

describe('docs stand alone', () => {
  it('every relative link in README.md and docs/*.md resolves inside the repository', () => {
    const broken: string[] = [];
    for (const md of MARKDOWN) {
      const text = readFileSync(path.join(ROOT, md), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue; // http(s), mailto: not relative
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const resolved =
          file === '' ? path.join(ROOT, md) : path.resolve(path.dirname(path.join(ROOT, md)), file);
        if (!resolved.startsWith(ROOT) || !existsSync(resolved)) broken.push(`${md}: ${target}`);
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
          broken.push(`${md}: ${target} (no such anchor)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every D-number cited in packages/*/src, README.md and docs has its anchor in docs/protocol.md', () => {
    const anchors = anchorsOf(path.join(ROOT, 'docs/protocol.md'));
    const files = [
      ...readdirSync(path.join(ROOT, 'packages')).flatMap((p) =>
        existsSync(path.join(ROOT, 'packages', p, 'src'))
          ? sourceFiles(path.join(ROOT, 'packages', p, 'src'))
          : [],
      ),
      ...MARKDOWN.map((f) => path.join(ROOT, f)),
      path.join(ROOT, 'docs/openapi.json'),
    ];
    const missing = new Set<string>();
    let cited = 0;
    for (const f of files)
      for (const m of readFileSync(f, 'utf8').matchAll(/\bD(\d{1,3})\b/g)) {
        cited++;
        if (!anchors.has(`d${m[1]}`)) missing.add(`D${m[1]} (${path.relative(ROOT, f)})`);
      }
    expect(cited).toBeGreaterThan(100);
    expect([...missing]).toEqual([]);
    for (let n = 1; n <= 55; n++) expect(anchors.has(`d${n}`), `D${n}`).toBe(true);
  });

  // Issue #27: code comments cited the architecture and interface pages of a shared folder that
  // is not part of the repository. Every document a code comment or a page names must be in it:
  // no upper-case name of an outside document, and every `….md` path (with its anchor) resolves
  // from the repository's root, the citing file's folder, or (a bare name) docs/.
  it('every document cited in code comments and docs resolves inside the repository', () => {
    const roots = ['packages', 'bench'].flatMap((d) => sourceFiles(path.join(ROOT, d)));
    const top = readdirSync(ROOT)
      .filter((f) => /\.(ts|mjs|js)$/.test(f))
      .map((f) => path.join(ROOT, f));
    const markdown = [
      ...MARKDOWN,
      ...readdirSync(path.join(ROOT, 'packages')).flatMap((p) =>
        existsSync(path.join(ROOT, 'packages', p, 'README.md')) ? [`packages/${p}/README.md`] : [],
      ),
      'bench/README.md',
    ].map((f) => path.join(ROOT, f));
    const broken: string[] = [];
    let cited = 0;
    // Code: its comments only (a string or a regular expression is not a citation).
    const comments = (code: string): string =>
      [...code.matchAll(/\/\*[\s\S]*?\*\/|(?<![:\\'"`])\/\/[^\n]*/g)].map((m) => m[0]).join('\n');
    for (const file of [...roots, ...top, ...markdown]) {
      const raw = readFileSync(file, 'utf8');
      const text = file.endsWith('.md') ? raw : comments(raw);
      const rel = path.relative(ROOT, file);
      for (const m of text.matchAll(/\b(ARCHITECTURE|INTERFACE|DECISIONS|STACK)(\.md)?\b/g))
        broken.push(`${rel}: ${m[0]} (not in the repository)`);
      for (const m of text.matchAll(
        /(?<![\w/.-])((?:\.\.?\/)*(?:[\w.-]+\/)*[\w-]+\.md)(#[\w-]+)?/g,
      )) {
        const [, target, anchor] = m as unknown as [string, string, string | undefined];
        if (/https?:\/\/\S*$/.test(text.slice(Math.max(0, m.index - 200), m.index))) continue;
        cited++;
        const found = [
          path.resolve(ROOT, target),
          path.resolve(path.dirname(file), target),
          ...(target.includes('/') ? [] : [path.join(ROOT, 'docs', target)]),
        ].find((p) => p.startsWith(ROOT) && existsSync(p));
        if (!found) broken.push(`${rel}: ${target}`);
        else if (anchor && !anchorsOf(found).has(anchor.slice(1)))
          broken.push(`${rel}: ${target}${anchor} (no such anchor)`);
      }
    }
    expect(cited).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });
});
