import { invalid } from '../../errors/app-error.js';

/**
 * D70 (NIST SP 800-63B §5.1.1.2: refuse passwords known to be common or tied to the account):
 * a password on the 10,000 most common passwords, or equal to the person's name ignoring case,
 * is refused with 400 and a message saying why. The list is the head of zxcvbn-ts's frequency-
 * ranked common-password dictionary (@zxcvbn-ts/language-common), loaded on first use (most
 * requests never set a password), compared ignoring case.
 */
export const COMMON_PASSWORDS = 10_000;

let common: Promise<ReadonlySet<string>> | undefined;

export function commonPasswords(): Promise<ReadonlySet<string>> {
  common ??= import('@zxcvbn-ts/language-common').then(
    (m) => new Set(m.dictionary['passwords-common'].slice(0, COMMON_PASSWORDS)),
  );
  return common;
}

/** Throws 400 VALIDATION_ERROR on `field` when `password` may not be used by `name`. */
export async function requireAcceptablePassword(
  password: string,
  name: string | undefined,
  field = 'password',
): Promise<void> {
  const folded = password.normalize('NFKC').toLowerCase();
  if (name !== undefined && folded === name.normalize('NFKC').toLowerCase())
    throw invalid(field, 'must not be your name: choose a password others cannot guess');
  if ((await commonPasswords()).has(folded))
    throw invalid(
      field,
      'is one of the 10,000 most common passwords, which are tried first: choose another',
    );
}
