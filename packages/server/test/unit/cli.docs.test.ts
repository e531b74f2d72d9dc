import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { adminCommands } from '../../src/cli/admin.commands.js';
import { loadConfig } from '../../src/config/config.js';

// Issue #13: the README's operator section lists every `parley admin …` command.
const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');

function leaves(cmd: Command, prefix: string[]): string[][] {
  if (cmd.commands.length === 0) return [prefix];
  return cmd.commands.flatMap((c) => leaves(c, [...prefix, c.name()]));
}

describe('README operator section', () => {
  it('names every admin command', () => {
    const admin = adminCommands(() => loadConfig({}));
    const all = leaves(admin, ['admin']);
    expect(all.length).toBeGreaterThan(40);
    for (const path of all) expect(readme, path.join(' ')).toContain(`parley -- ${path.join(' ')}`);
    for (const top of ['config', 'config --markdown', 'backup', 'restore', 'seed --demo'])
      expect(readme).toContain(`parley -- ${top}`);
  });
});
