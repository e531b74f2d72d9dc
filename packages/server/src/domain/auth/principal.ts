/** Who is calling: a bot (through its bot user) or a human user (D10: permissions decide). */
export interface Principal {
  readonly userId: number;
  readonly name: string;
  readonly isBot: boolean;
  /** set when the caller is a bot */
  readonly botId: number | undefined;
}
