// An OCPP 1.6 configuration key as the OCPP 2.0.1 component and variable that holds it: the
// common keys from configuration-keys.json (data), and a key written as Component.Variable,
// Component/Variable or either with [Instance] passed through as it is. Pure.
import { readFileSync } from 'node:fs';

export interface ComponentVariable {
  readonly component: string;
  readonly variable: string;
  readonly instance?: string;
}

type Entry = ComponentVariable | { readonly none: string };

const KEYS = (JSON.parse(readFileSync(new URL('./configuration-keys.json', import.meta.url), 'utf8')) as { keys: Record<string, Entry> }).keys;
/** 2.0.1 names are case-insensitive (Part 2 "Component"/"Variable"), so are the 1.6 keys looked up here. */
const BY_LOWER = new Map(Object.entries(KEYS).map(([k, v]) => [k.toLowerCase(), { key: k, entry: v }]));
const WRITTEN = /^([A-Za-z0-9_-]{1,50})[./]([A-Za-z0-9_-]{1,50})(?:\[([A-Za-z0-9_-]{1,50})\])?$/;

/** The 2.0.1 variable of a 1.6 key, or why there is none (`unknown`: neither listed nor written as Component.Variable). */
export function componentVariableOf(key: string): ComponentVariable | { readonly none: string } | { readonly unknown: true } {
  const listed = BY_LOWER.get(key.toLowerCase());
  if (listed) return listed.entry;
  const m = WRITTEN.exec(key);
  if (m) return { component: m[1]!, variable: m[2]!, ...(m[3] ? { instance: m[3] } : {}) };
  return { unknown: true };
}

/** The 1.6 key a 2.0.1 variable answers for: the listed key, else Component.Variable[Instance]. */
export function keyOf(cv: { component: { name: string }; variable: { name: string; instance?: string } }): string {
  const same = (a: string | undefined, b: string | undefined) => (a ?? '').toLowerCase() === (b ?? '').toLowerCase();
  for (const [key, entry] of Object.entries(KEYS)) {
    if ('component' in entry && same(entry.component, cv.component.name) && same(entry.variable, cv.variable.name) && same(entry.instance, cv.variable.instance)) return key;
  }
  return `${cv.component.name}.${cv.variable.name}${cv.variable.instance ? `[${cv.variable.instance}]` : ''}`;
}

/** The 2.0.1 request's component and variable of a resolved key. */
export function requestPart(cv: ComponentVariable): { component: { name: string }; variable: { name: string; instance?: string } } {
  return { component: { name: cv.component }, variable: { name: cv.variable, ...(cv.instance ? { instance: cv.instance } : {}) } };
}
