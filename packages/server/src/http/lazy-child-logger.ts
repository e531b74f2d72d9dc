import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<FastifyBaseLogger['info']>;

/** what pino adds to the base interface (absent from Fastify's no-op logger) */
interface PinoLike extends FastifyBaseLogger {
  levels: { values: Record<string, number> };
  levelVal: number;
}

const isPino = (l: FastifyBaseLogger): l is PinoLike =>
  typeof (l as Partial<PinoLike>).levelVal === 'number' &&
  typeof (l as Partial<PinoLike>).levels?.values === 'object';

/**
 * A request's logger, made only when the request logs something at an enabled level. Fastify
 * gives every request a pino child (its bindings serialized, D54's redaction set up) although at
 * the usual levels most requests log nothing: a send spent about 2 % of its CPU and a tenth of
 * its allocations making a logger it never used (issue 24's send profile, bench/README.md).
 * What a request does log is the real child's line, request id and redaction included.
 */
class LazyChild implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;
  private readonly threshold: number;

  constructor(
    private readonly parent: PinoLike,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {
    // a route's own logLevel (Fastify passes it here) or the parent's
    const own = typeof opts.level === 'string' ? parent.levels.values[opts.level] : undefined;
    this.threshold = own ?? parent.levelVal;
  }

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.opts));
  }

  private at(level: Level, args: LogArgs): void {
    const value = this.parent.levels.values[level] ?? Infinity;
    if (this.made === undefined && value < this.threshold) return;
    this.real()[level](...args);
  }

  get level(): string {
    return this.made?.level ?? this.opts.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  // Methods on the prototype, not arrow fields: a request's logger allocates one object.
  fatal(...args: LogArgs): void {
    this.at('fatal', args);
  }
  error(...args: LogArgs): void {
    this.at('error', args);
  }
  warn(...args: LogArgs): void {
    this.at('warn', args);
  }
  info(...args: LogArgs): void {
    this.at('info', args);
  }
  debug(...args: LogArgs): void {
    this.at('debug', args);
  }
  trace(...args: LogArgs): void {
    this.at('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a lazy child for pino, the default for anything else. */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  opts: ChildLoggerOptions,
): FastifyBaseLogger {
  // one parent for every request: asked once (issue 29: every request asked again)
  if (logger !== checked.logger) checked = { logger, pino: isPino(logger) };
  return checked.pino
    ? new LazyChild(logger as PinoLike, bindings, opts)
    : logger.child(bindings, opts);
}
let checked: { logger: FastifyBaseLogger | undefined; pino: boolean } = {
  logger: undefined,
  pino: false,
};
