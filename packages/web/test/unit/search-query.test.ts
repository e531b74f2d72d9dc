import { describe, expect, it } from 'vitest';
import {
  dateBounds,
  highlight,
  highlightTerms,
  idAt,
  parseSearch,
} from '../../src/lib/search-query.js';

// D67: the web app reads `from:name in:#channel has:image before:2026-01-01` (issue 26).
describe('parseSearch (D67)', () => {
  it('reads every filter and keeps the free words as q', () => {
    expect(
      parseSearch(
        'from:ada in:#general has:image before:2026-03-01 after:2026-02-01 pinned:true release notes',
      ),
    ).toEqual({
      q: 'release notes',
      from: 'ada',
      in: 'general',
      has: 'image',
      before: '2026-03-01',
      after: '2026-02-01',
      pinned: true,
      problems: [],
    });
  });

  it('filters anywhere among the words; phrases and exclusions pass through', () => {
    expect(parseSearch('"big news" from:@Bob -draft tea')).toEqual({
      q: '"big news" -draft tea',
      from: 'Bob',
      problems: [],
    });
    expect(parseSearch('from:"Ada L" hi').from).toBe('Ada L');
    expect(parseSearch('in:random').in).toBe('random');
    expect(parseSearch('pinned:false').pinned).toBe(false);
    expect(parseSearch('HAS:Video').has).toBe('video');
  });

  it('an unknown operator is a word; a finished last word keeps its space (no prefix)', () => {
    expect(parseSearch('http://x.y foo:bar').q).toBe('http://x.y foo:bar');
    expect(parseSearch('hello ').q).toBe('hello ');
    expect(parseSearch('hello').q).toBe('hello');
    expect(parseSearch('東京 from:a').q).toBe('東京');
  });

  it('says what it could not read', () => {
    expect(parseSearch('has:gif before:2026-02-30 after:tomorrow pinned:yes').problems).toEqual([
      'has:gif (one of link, embed, file, image, video, audio)',
      'before:2026-02-30 (a date as yyyy-mm-dd)',
      'after:tomorrow (a date as yyyy-mm-dd)',
      'pinned:yes (true or false)',
    ]);
  });
});

describe('dates as ids (D3)', () => {
  it('before a day starts, after it ends; nothing before 2026', () => {
    const day = Date.UTC(2026, 1, 1);
    expect(idAt(Date.UTC(2026, 0, 1))).toBe(0);
    expect(idAt(Date.UTC(2025, 5, 1))).toBe(0);
    expect(dateBounds({ before: '2026-02-01' })).toEqual({ before: idAt(day) });
    expect(dateBounds({ after: '2026-02-01' })).toEqual({ after: idAt(day + 86_400_000) - 1 });
    // the server's own generator: an id made at 2026-02-01 00:00:00.000 is ≥ before's bound
    expect(idAt(day)).toBe((day - Date.UTC(2026, 0, 1)) * 4096);
  });
});

describe('highlight (D67)', () => {
  it('marks the words at word starts, case-insensitively, as text pieces', () => {
    expect(highlight('The Quick quickly requick', ['quick'])).toEqual([
      { text: 'The ', hit: false },
      { text: 'Quick', hit: true },
      { text: ' ', hit: false },
      { text: 'quick', hit: true },
      { text: 'ly requick', hit: false },
    ]);
    expect(highlight('<b>x</b>', ['b'])).toEqual([
      { text: '<', hit: false },
      { text: 'b', hit: true },
      { text: '>x</', hit: false },
      { text: 'b', hit: true },
      { text: '>', hit: false },
    ]);
  });
  it('CJK inside a run; phrases whole; exclusions never', () => {
    expect(highlight('東京タワー', ['京'])).toEqual([
      { text: '東', hit: false },
      { text: '京', hit: true },
      { text: 'タワー', hit: false },
    ]);
    expect(highlightTerms('"red fox" -lazy dog')).toEqual(['red fox', 'dog']);
    expect(highlight('no match', [])).toEqual([{ text: 'no match', hit: false }]);
  });
});
