// Every independent mistake of a request in ONE 422 (docs/http-api.md, Errors): each
// check adds its field errors under the detail it would have answered alone, so a request
// with one mistake reads as before and one with several lists them all.
import { HttpProblem, type FieldError } from './errors.js';

/** At most this many field errors in one answer: every field of a request, bounded for 100,000 bad readings. */
const MAX_LISTED = 40;

export class ProblemList {
  readonly errors: FieldError[] = [];
  private readonly details: string[] = [];

  /** Adds the errors of one check; `detail` is what the answer says when only this check failed. */
  add(detail: string, errors: readonly FieldError[]): void {
    if (errors.length === 0) return;
    this.errors.push(...errors);
    if (!this.details.includes(detail)) this.details.push(detail);
  }

  /** Whether a check already named `path`, a field inside it or the whole body: later checks leave it alone. */
  named(path: string): boolean {
    return this.errors.some((e) => e.path === '(body)' || e.path === path || e.path.startsWith(`${path}.`) || e.path.startsWith(`${path}[`));
  }

  get empty(): boolean {
    return this.errors.length === 0;
  }

  /** The 422 listing everything added (throws nothing when nothing was). */
  throwIfAny(what: string): void {
    if (this.empty) return;
    const detail = this.details.length === 1 ? this.details[0] : `the ${what} has ${this.errors.length} problems, all listed in errors: ${this.details.join('; ')}`;
    throw new HttpProblem(422, detail, { errors: this.errors.slice(0, MAX_LISTED) });
  }
}
