import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateOpenApi } from '../../src/cli/openapi.js';
import { CONFIG_SPEC, configMarkdownTable } from '../../src/config/config.js';

// Docs are part of the change (docs/architecture.md#habit-2): the committed OpenAPI document and the README's
// configuration table are generated from the code; these tests fail when either is stale.
const root = new URL('../../../../', import.meta.url);

describe('generated docs are current', () => {
  it('docs/openapi.json matches the schemas (regenerate: npm run openapi)', async () => {
    const committed = readFileSync(new URL('docs/openapi.json', root), 'utf8');
    expect(committed.trim()).toBe((await generateOpenApi()).trim());
  });

  it('the README configuration table lists every variable, as `parley config --markdown` prints it', () => {
    // Compared cell by cell: Prettier pads Markdown tables, which changes no cell.
    const norm = (t: string): string =>
      t
        .split('\n')
        .map((l) =>
          l
            .trim()
            .replace(/\s*\|\s*/g, '|')
            .replace(/\|:?-{3,}:?(?=\|)/g, '|---'),
        )
        .join('\n');
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    expect(norm(readme)).toContain(norm(configMarkdownTable()));
    for (const s of CONFIG_SPEC) expect(readme).toContain(`\`${s.name}\``);
  });

  it('the OpenAPI document covers every bot endpoint of docs/interface.md', async () => {
    const doc = JSON.parse(await generateOpenApi()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const want: Array<[string, string]> = [
      ['get', '/api/v1/bot/me'],
      ['post', '/api/v1/channels/{channelId}/messages'],
      ['get', '/api/v1/channels/{channelId}/messages'],
      ['put', '/api/v1/channels/{channelId}/messages/{messageId}'],
      ['delete', '/api/v1/channels/{channelId}/messages/{messageId}'],
      ['get', '/api/v1/guilds/{guildId}/channels'],
      ['get', '/api/v1/channels/{channelId}'],
      ['get', '/api/v1/guilds/{guildId}/members'],
      ['get', '/api/v1/guilds/{guildId}/members/{userId}'],
      ['post', '/api/v1/users/{userId}/dm'],
      ['post', '/api/v1/dm/channels/{channelId}/messages'],
      ['get', '/api/v1/dm/channels/{channelId}/messages'],
    ];
    for (const [method, path] of want)
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
  });
});
