/**
 * Turns a JSON pointer as ajv reports it (`/meters/1/unit_id`) into the path people read
 * in error messages (`meters[1].unit_id`): config problems and HTTP problem+json bodies.
 */
export function pointerToPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}
