import { SignJWT, jwtVerify, errors } from 'jose';

/**
 * D8: a bot token is an HS256 JWT naming the bot (`sub`) and a token generation (`gen`), with no
 * expiry. Resetting the token bumps the generation stored with the bot; a token whose `gen` is
 * not the current one is refused (D9).
 */
export interface BotTokenClaims {
  botId: number;
  generation: number;
}

const TYP = 'parley-bot';

export class BotTokenCodec {
  // Verifying an HMAC per request is cheap but not free; tokens are immutable, so a verified
  // token's claims can be remembered. Whether the generation is still current is checked
  // against the database on every request, so a reset still takes effect at once.
  private readonly verified = new Map<string, BotTokenClaims>();
  private static readonly CACHE_MAX = 10_000;

  constructor(private readonly key: Uint8Array) {}

  async sign(claims: BotTokenClaims, nowMs: number): Promise<string> {
    return new SignJWT({ gen: claims.generation, typ: TYP })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(claims.botId))
      .setIssuedAt(Math.floor(nowMs / 1000))
      .sign(this.key);
  }

  /**
   * The claims of a valid token, or null for anything else (malformed, bad signature…). A token
   * verified before is answered at once, without a promise: this runs on every bot request
   * (issue 29: the send path's promises).
   */
  verify(token: string): BotTokenClaims | null | Promise<BotTokenClaims | null> {
    return this.verified.get(token) ?? this.verifySignature(token);
  }

  private async verifySignature(token: string): Promise<BotTokenClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'] });
      const botId = Number(payload.sub);
      const generation = payload['gen'];
      if (payload['typ'] !== TYP || !Number.isSafeInteger(botId) || botId <= 0) return null;
      if (typeof generation !== 'number' || !Number.isSafeInteger(generation)) return null;
      const claims = { botId, generation };
      if (this.verified.size >= BotTokenCodec.CACHE_MAX) this.verified.clear();
      this.verified.set(token, claims);
      return claims;
    } catch (err) {
      if (err instanceof errors.JOSEError || err instanceof TypeError) return null;
      throw err;
    }
  }
}
