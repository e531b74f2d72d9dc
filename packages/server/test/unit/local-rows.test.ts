import { describe, expect, it } from 'vitest';
import { LocalRows } from '../../src/events/local-rows.js';
import type { LogRow } from '../../src/events/log.js';
import { writesDerivedData } from '../../src/storage/derived-writes.js';

const row = (xid: number, pos: number, data = `{"n":${pos}}`): LogRow => ({
  xid,
  pos,
  type: 'MESSAGE_CREATE',
  data,
  recipients: '',
  createdAt: 0,
  audience: '{"k":"all"}',
});

// D72 and issue 29: this node's own log rows reach its people at commit, never again from its
// log reader — also when a PostgreSQL group is written as one statement, which commits before
// the rows' keys are known here (storage/group-commit.ts, events/local-rows.ts `appending`).
describe('LocalRows (events/local-rows.ts)', () => {
  it("skips this node's own rows and hands on the others' in order", () => {
    const handed: number[] = [];
    const local = new LocalRows((r) => handed.push(r.pos));
    local.add(row(1, 2));
    for (const pos of [1, 2, 3]) local.read(row(1, pos));
    expect(handed).toEqual([1, 3]);
  });

  it('a row read while an append is under way waits for its key: an own row is not handed twice', () => {
    const handed: number[] = [];
    const local = new LocalRows((r) => handed.push(r.pos));
    const settled = local.appending();
    // the reader sees the committed row before the append learns its key
    local.read(row(7, 10));
    local.read(row(7, 11)); // another node's, behind it: order is kept
    local.below({ xid: 8, pos: 0 });
    expect(handed).toEqual([]);
    local.add(row(7, 10));
    settled();
    expect(handed).toEqual([11]);
    settled(); // twice changes nothing
    expect(handed).toEqual([11]);
  });

  it('a held row waits only for the appends begun before it was read (a busy node still hands rows on)', () => {
    const handed: number[] = [];
    const local = new LocalRows((r) => handed.push(r.pos));
    const first = local.appending();
    local.read(row(1, 1));
    const second = local.appending();
    local.read(row(1, 2));
    first();
    // row 1 needed only the first append; row 2 waits for the second
    expect(handed).toEqual([1]);
    const third = local.appending();
    second();
    expect(handed).toEqual([1, 2]);
    third();
  });

  it('an own row the reader passed without handing (rolled back) is forgotten once it is past, held or not', () => {
    const handed: number[] = [];
    const local = new LocalRows((r) => handed.push(r.pos));
    local.add(row(1, 5, 'rolled back'));
    const settled = local.appending();
    local.read(row(1, 4));
    local.below({ xid: 2, pos: 0 });
    settled();
    // key 5 comes again with other data (SQLite reuses a rolled-back key): it is not ours
    local.read(row(1, 5, 'someone else'));
    expect(handed).toEqual([4, 5]);
  });
});

// Which statements move the derived cache's version (storage/derived-writes.ts): a group
// commit's end written as one statement writes messages, the event log and the counts only.
describe('writesDerivedData: statements with common table expressions', () => {
  it('a WITH that writes only tables no cached value derives from leaves the version alone', () => {
    expect(
      writesDerivedData(
        'with "g0" as (insert into "messages" ("id") values ($1)), "g1" as (insert into ' +
          '"upload_usage_daily" ("user_id") values ($2) on conflict ("user_id", "day") do update ' +
          'set "messages_sent" = 1) insert into "event_log" ("xid") values (1) returning "pos"',
      ),
    ).toBe(false);
    // the event log's reader: a read
    expect(writesDerivedData('with h as (select 1) select * from "event_log"')).toBe(false);
  });

  it('a WITH that writes anything else moves it', () => {
    expect(
      writesDerivedData(
        'with "g0" as (insert into "messages" ("id") values ($1)) update "members" set "nick" = $2',
      ),
    ).toBe(true);
    expect(writesDerivedData('with d as (delete from "roles" where "id" = $1) select 1')).toBe(
      true,
    );
    // a target it cannot name counts as a write
    expect(writesDerivedData('with u as (update only "users" set "name" = $1) select 1')).toBe(
      true,
    );
  });
});
