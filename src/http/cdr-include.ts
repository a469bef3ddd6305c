// `?include=` on the cdrs endpoints: the parts of a cdr a caller asks for beyond the
// contract's fields. The contract (interface.md) lists the price record's fields and our
// OpenAPI forbids others, so a client that validates the answer strictly keeps getting
// exactly those; what the operator's tariff adds (docs/http-api.md#tariffs) comes only when
// asked for. Comma-separated and/or repeated; an unknown part is a 400 naming the known ones.
import { HttpProblem } from './errors.js';

/** The parts `include` can name. */
export const CDR_INCLUDE_PARTS = ['cost_components', 'signed_data'] as const;
export type CdrIncludePart = (typeof CDR_INCLUDE_PARTS)[number];

/** The parts asked for in a request's query `include` (none when it is absent). */
export function cdrIncludeParts(raw: unknown): ReadonlySet<CdrIncludePart> {
  if (raw === undefined) return new Set();
  const values = Array.isArray(raw) ? raw : [raw];
  const parts = new Set<CdrIncludePart>();
  for (const value of values) {
    if (typeof value !== 'string') throw new HttpProblem(400, 'include must be a comma-separated list of names', { errors: [{ path: 'include', message: 'must be a string' }] });
    for (const name of value.split(',').map((v) => v.trim()).filter((v) => v !== '')) {
      if (!(CDR_INCLUDE_PARTS as readonly string[]).includes(name)) {
        throw new HttpProblem(400, `include names an unknown part "${name.slice(0, 40)}" (known: ${CDR_INCLUDE_PARTS.join(', ')})`, { errors: [{ path: 'include', message: `unknown part "${name.slice(0, 40)}"` }] });
      }
      parts.add(name as CdrIncludePart);
    }
  }
  return parts;
}
