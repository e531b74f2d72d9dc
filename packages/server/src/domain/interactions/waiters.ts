import type { CommandChoice } from '@parley/protocol';
import type { Domain } from '../context.js';

/**
 * D64: an autocomplete request waits (up to 3 s) for the bot's choices. A callback on this node
 * wakes the waiter at once; one answered through another node is seen by a short poll of the
 * interaction's row (every node reads the same database).
 */
class ChoicesWaiter {
  private readonly waiting = new Map<number, () => void>();

  /** the callback of `id` committed on this node */
  answered(id: number): void {
    this.waiting.get(id)?.();
  }

  async wait(d: Domain, id: number, ms: number): Promise<CommandChoice[]> {
    const deadline = Date.now() + ms;
    try {
      for (;;) {
        const row = await d.db
          .selectFrom('interactions')
          .select('choices')
          .where('id', '=', id)
          .executeTakeFirst();
        if (row?.choices) return JSON.parse(row.choices) as CommandChoice[];
        const left = deadline - Date.now();
        if (left <= 0) return [];
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(left, 100));
          this.waiting.set(id, () => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    } finally {
      this.waiting.delete(id);
    }
  }
}

export const choicesWaiter = new ChoicesWaiter();
