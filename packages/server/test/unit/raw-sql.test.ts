import { describe, expect, it } from 'vitest';
import { flatRows } from '../../src/storage/raw-sql.js';

// Issue 29: the parameters of a group commit's multi-row statements, built without V8's generic
// Array.prototype.flat / flatMap paths (bench/README.md).
describe('multi-row statements (storage/raw-sql.ts)', () => {
  it('flatRows: each row’s values in order, one row after another', () => {
    const rows = [
      { a: 1, b: 'x' },
      { a: 2, b: 'y' },
    ];
    expect(flatRows(rows, (r, out) => out.push(r.a, r.b))).toEqual([1, 'x', 2, 'y']);
    expect(flatRows([], () => undefined)).toEqual([]);
  });
});
