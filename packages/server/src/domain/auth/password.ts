/**
 * Argon2id password hashes. The native module is loaded on first use: most commands and requests
 * never hash a password, and the CLI starts faster without it (issue #13).
 */
export async function hashPassword(password: string): Promise<string> {
  const { hash } = await import('@node-rs/argon2');
  return hash(password);
}
