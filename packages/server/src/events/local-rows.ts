import { keyLess, type LogKey, type LogRow } from './log.js';

/**
 * D72: the log rows this process wrote that its reader has not passed yet. A row is noted when
 * it is appended — before its transaction commits, or (a PostgreSQL group commit written as one
 * statement, storage/group-commit.ts) as it commits, while the reader's rows wait (`appending`):
 * the reader may see it before the commit's callbacks run, and must skip it all the same (this
 * node's people get it from those). A rolled-back row is never read and goes when the reader
 * passes its key; its key may be used again on SQLite (a rolled-back AUTOINCREMENT), so a row is
 * only taken with its own data.
 */
export class LocalRows {
  private readonly rows = new Map<string, LogRow>();
  /** appends whose keys are not known yet (`appending`), by number, oldest first */
  private readonly pending = new Set<number>();
  private appends = 0;
  /** rows the reader handed meanwhile, each with the newest append begun before it was read */
  private held: Array<{ row: LogRow; after: number }> = [];
  /** the end the reader reached while rows were held */
  private heldEnd: { end: LogKey } | undefined;

  /** `deliver`: a row the reader handed that is not one of this node's own */
  constructor(private readonly deliver: (r: LogRow) => void) {}

  add(r: LogRow): void {
    this.rows.set(`${r.xid}:${r.pos}`, r);
  }

  /**
   * Rows are being appended whose keys come later (`add`), and they may be committed before
   * (a PostgreSQL group written as one statement: storage/group-commit.ts). A row the reader
   * hands meanwhile may be one of them: it is held until every append begun before it was read
   * has called the returned function — never longer, so a node that is always appending still
   * hands other nodes' rows on, in order.
   */
  appending(): () => void {
    const id = ++this.appends;
    this.pending.add(id);
    return () => {
      if (this.pending.delete(id)) this.release();
    };
  }

  /** A row the reader handed: to this node's people unless it is one of its own. */
  read(r: LogRow): void {
    if (this.pending.size > 0 || this.held.length > 0)
      this.held.push({ row: r, after: this.appends });
    else if (!this.take(r)) this.deliver(r);
  }

  private release(): void {
    const oldest = this.pending.values().next();
    const low = oldest.done ? Infinity : oldest.value;
    let n = 0;
    while (n < this.held.length && (this.held[n] as { after: number }).after < low) n++;
    if (n > 0) for (const { row } of this.held.splice(0, n)) if (!this.take(row)) this.deliver(row);
    // every row it had passed is handed: what of this node's it never handed went back
    const end = this.heldEnd;
    if (end && this.held.length === 0) {
      this.heldEnd = undefined;
      this.drop(end.end);
    }
  }

  /** True (and forgotten) when `r` is one of them. */
  private take(r: LogRow): boolean {
    if (this.rows.size === 0) return false;
    const id = `${r.xid}:${r.pos}`;
    const mine = this.rows.get(id);
    if (mine === undefined) return false;
    this.rows.delete(id);
    return mine.data === r.data && mine.type === r.type;
  }

  /** The reader is past `end`: rows below it that it never handed (rolled back) go. */
  below(end: LogKey): void {
    // after the held rows it passed: they may be among them
    if (this.held.length > 0) this.heldEnd = { end };
    else this.drop(end);
  }

  private drop(end: LogKey): void {
    if (this.rows.size === 0) return;
    for (const [id, r] of this.rows) if (keyLess(r, end)) this.rows.delete(id);
  }
}
