/**
 * D46: a person's name is their login, unique ignoring case. The key is the name in Unicode
 * normal form C, lower-cased with Unicode's rules (SQL's lower() only folds ASCII on SQLite,
 * so the key is computed here and stored).
 */
export function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}
