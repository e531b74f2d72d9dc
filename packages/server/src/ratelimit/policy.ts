import type { Config, RateSpec } from '../config/config.js';

/** D25: the two REST buckets. */
export type BucketName = 'global' | 'messages';

/** Who a bucket belongs to (D25): a bot, a human user's session (D10), or a client address. */
export type Subject =
  | { readonly kind: 'bot'; readonly id: number }
  | { readonly kind: 'user'; readonly id: number }
  | { readonly kind: 'address'; readonly ip: string };

export function subjectOf(principal: {
  readonly isBot: boolean;
  readonly botId: number | undefined;
  readonly userId: number;
}): Subject {
  return principal.isBot && principal.botId !== undefined
    ? { kind: 'bot', id: principal.botId }
    : { kind: 'user', id: principal.userId };
}

/** The store key: one bucket per (bucket name, subject). */
export function bucketKey(bucket: BucketName, subject: Subject): string {
  const who = subject.kind === 'address' ? `ip:${subject.ip}` : `${subject.kind}:${subject.id}`;
  return `${bucket}:${who}`;
}

/** The configured figures (D27), or null when the operator turned the bucket off. */
export function bucketSpec(
  config: Pick<Config, 'rateGlobal' | 'rateMessages'>,
  bucket: BucketName,
): RateSpec | null {
  return bucket === 'messages' ? config.rateMessages : config.rateGlobal;
}
