/** A small typed event emitter (no dependency on node:events, so it runs anywhere). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- handler argument lists vary
type Listener = (...args: any[]) => unknown;

export class Emitter<E extends { [K in keyof E]: (...args: never[]) => unknown }> {
  private readonly listeners = new Map<keyof E, Set<Listener>>();

  on<K extends keyof E>(type: K, listener: E[K]): this {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener as Listener);
    return this;
  }

  off<K extends keyof E>(type: K, listener: E[K]): this {
    this.listeners.get(type)?.delete(listener as Listener);
    return this;
  }

  once<K extends keyof E>(type: K, listener: E[K]): this {
    const wrapped = ((...args: unknown[]) => {
      this.off(type, wrapped);
      return (listener as Listener)(...args);
    }) as unknown as E[K];
    return this.on(type, wrapped);
  }

  listenerCount(type: keyof E): number {
    return this.listeners.get(type)?.size ?? 0;
  }

  /**
   * Call every listener; one that throws (or returns a rejected promise) does not stop the
   * others or the caller: it is reported to `onListenerError`. Returns, per listener, a promise
   * of whether it succeeded (after its promise settles, for async listeners).
   */
  protected emitAll<K extends keyof E>(type: K, ...args: Parameters<E[K]>): Promise<boolean>[] {
    const out: Promise<boolean>[] = [];
    for (const l of [...(this.listeners.get(type) ?? [])]) {
      try {
        const r = l(...args);
        out.push(
          Promise.resolve(r).then(
            () => true,
            (err: unknown) => {
              this.onListenerError(err, String(type));
              return false;
            },
          ),
        );
      } catch (err) {
        this.onListenerError(err, String(type));
        out.push(Promise.resolve(false));
      }
    }
    return out;
  }

  /** `emitAll` without waiting for anything (listener failures are reported all the same). */
  protected emit<K extends keyof E>(type: K, ...args: Parameters<E[K]>): void {
    void Promise.all(this.emitAll(type, ...args));
  }

  protected onListenerError(err: unknown, type: string): void {
    // A bot's handler failed: say so, and keep the connection going.
    console.error(`[parley] a ${type} handler failed:`, err);
  }
}
