import { describe, expect, it } from 'vitest';
import {
  candidates,
  previewText,
  queryAt,
  type MentionSource,
} from '../../src/screens/mention-autocomplete.js';

// Issue #24: the composer's mention autocomplete (D62 syntax, D57/D58 who may be mentioned) and
// the one-line previews of a replied-to message, without a browser.

const source: MentionSource = {
  people: [
    { id: 11, name: 'alice' },
    { id: 12, name: 'bob' },
    { id: 13, name: 'robot', isBot: true },
  ],
  roles: [{ id: 21, name: 'helpers' }],
  channels: [
    { id: 31, name: 'general' },
    { id: 32, name: 'random' },
  ],
  everyone: false,
};

describe('the query being typed (D62)', () => {
  it('finds @ and # after a space or at the start, up to the caret', () => {
    expect(queryAt('@al', 3)).toEqual({ sigil: '@', q: 'al', from: 0 });
    expect(queryAt('hi #gen', 7)).toEqual({ sigil: '#', q: 'gen', from: 3 });
    expect(queryAt('hi @', 4)).toEqual({ sigil: '@', q: '', from: 3 });
    expect(queryAt('hi @Bo and', 6)).toEqual({ sigil: '@', q: 'bo', from: 3 });
  });
  it('not inside a word (an address) or after a finished mention', () => {
    expect(queryAt('mail a@example', 14)).toBeNull();
    expect(queryAt('hi <@12> ', 9)).toBeNull();
    expect(queryAt('@alice done', 11)).toBeNull();
  });
});

describe('what @ and # offer (D57, D58, D61)', () => {
  it('a person comes with their avatar; a role, a channel and @everyone with their sigil', () => {
    const withAvatar: MentionSource = {
      ...source,
      people: [{ id: 11, name: 'alice', avatar: 'http://x/cdn/avatars/11.png' }],
      everyone: true,
    };
    expect(candidates(withAvatar, '@', 'al')[0]?.icon).toEqual({
      person: { id: 11, name: 'alice', avatar: 'http://x/cdn/avatars/11.png' },
    });
    expect(candidates(withAvatar, '@', 'help')[0]?.icon).toEqual({ sigil: '@' });
    expect(candidates(withAvatar, '@', 'every')[0]?.icon).toEqual({ sigil: '@' });
    expect(candidates(withAvatar, '#', 'gen')[0]?.icon).toEqual({ sigil: '#' });
  });

  it('people first (prefix matches before inner ones), then roles; inserting the D62 syntax', () => {
    const bo = candidates(source, '@', 'bo');
    expect(bo.map((c) => [c.label, c.insert, c.hint])).toEqual([
      ['@bob', '<@12>', 'person'],
      ['@robot', '<@13>', 'bot'],
    ]);
    expect(candidates(source, '@', 'help').map((c) => c.insert)).toEqual(['<@&21>']);
  });
  it('@everyone and @here only with MENTION_EVERYONE', () => {
    expect(candidates(source, '@', 'e').map((c) => c.label)).not.toContain('@everyone');
    const loud = candidates({ ...source, everyone: true }, '@', 'e');
    expect(loud.map((c) => c.insert)).toContain('@everyone');
    expect(candidates({ ...source, everyone: true }, '@', 'he').map((c) => c.insert)).toEqual([
      '<@&21>',
      '@here',
    ]);
  });
  it('# offers channels as <#id>', () => {
    expect(candidates(source, '#', '').map((c) => c.insert)).toEqual(['<#31>', '<#32>']);
    expect(candidates(source, '#', 'ran').map((c) => c.label)).toEqual(['#random']);
  });
  it('at most eight at a time', () => {
    const many = {
      ...source,
      people: Array.from({ length: 30 }, (_, i) => ({ id: 100 + i, name: `user${i}` })),
    };
    expect(candidates(many, '@', 'user')).toHaveLength(8);
  });
});

describe('a replied-to message in one line', () => {
  const names = {
    user: (id: number) => (id === 12 ? 'bob' : undefined),
    role: (id: number) => (id === 21 ? { name: 'helpers', color: null } : undefined),
    channel: (id: number) => (id === 31 ? 'general' : undefined),
  };
  it('shows mentions as their names and joins the lines', () => {
    expect(previewText({ content: 'hey <@12>\nsee <#31> and <@&21> <@99>' }, names)).toBe(
      'hey @bob see #general and @helpers @unknown-user',
    );
  });
  it('shows the words without their markup: emphasis, code, quotes, lists; spoilers hidden', () => {
    expect(
      previewText(
        { content: 'Release **today**:\n```js\nconsole.log("ship it");\n```\nping <@12> please' },
        names,
      ),
    ).toBe('Release today: console.log("ship it"); ping @bob please');
    expect(previewText({ content: '> quoted\n- one\n- two\n# Title' }, names)).toBe(
      'quoted one two Title',
    );
    expect(previewText({ content: 'the answer is ||42|| ok' }, names)).toBe(
      'the answer is (spoiler) ok',
    );
    expect(previewText({ content: 'see [the guide](https://example.com) and `x`' }, names)).toBe(
      'see the guide and x',
    );
    // what is not markup in the dialect stays as written
    expect(previewText({ content: '<b>hi</b> 2 * 3 = 6' }, names)).toBe('<b>hi</b> 2 * 3 = 6');
  });
  it('cuts long text, and says what a message without text holds', () => {
    expect(previewText({ content: 'x'.repeat(200) }, names, 10)).toBe(`${'x'.repeat(10)}…`);
    expect(
      previewText(
        {
          content: '',
          attachments: [{ url: 'u', filename: 'a.png', size: 1, contentType: 'image/png' }],
        },
        names,
      ),
    ).toBe('Attachment');
  });
});
