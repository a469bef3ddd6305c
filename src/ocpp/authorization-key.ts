// The charger's HTTP basic auth password, its AuthorizationKey (pure). The OCPP 1.6
// security whitepaper (edition 2 and later, requirement A00.FR.205) asks for a key of at
// least 16 bytes, at most 20, written as up to 40 hexadecimal digits. Chargers in the field
// send it either as typed (the text) or, as the whitepaper intends, as the bytes the hex
// digits stand for; a key of 32..40 hex digits (16..20 bytes) is accepted both ways.
// Other keys are taken as text of 16..40 printable ASCII characters (at least 16 bytes).

/** Why `key` cannot be an AuthorizationKey, or null. */
export function authorizationKeyProblem(key: string): string | null {
  if (key.length < 16 || key.length > 40) return 'the password must be 16 to 40 characters (OCPP AuthorizationKey)';
  if (!/^[!-~]+$/.test(key)) return 'the password must be printable ASCII without spaces (OCPP AuthorizationKey)';
  return null;
}

/** The byte strings a charger may send as its password for this key: the text, and for 32..40 hex digits (even) their bytes too. */
export function authorizationKeyForms(key: string): Buffer[] {
  const forms = [Buffer.from(key, 'utf8')];
  if (/^(?:[0-9a-fA-F]{2}){16,20}$/.test(key)) forms.push(Buffer.from(key, 'hex'));
  return forms;
}
