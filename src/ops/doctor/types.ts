// doctor: what a check is given and what it reports.
import type { Config } from '../../config/types.js';

export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

/** One line of `metergate doctor`: what was checked, how it went, and how to fix it. */
export interface CheckResult {
  /** Short name, e.g. `config`, `serial rs485-1`, `meter 0b6f2a4e`. */
  readonly check: string;
  readonly status: CheckStatus;
  readonly detail: string;
  /** What to do about a warn/fail, in commands an installer can type. */
  readonly fix?: string;
}

/** What every check gets. Checks that need a valid config are skipped without one. */
export interface DoctorEnv {
  readonly configPath: string;
  readonly config: Config | null;
  /** The problems that made the config invalid (empty when valid). */
  readonly configProblems: readonly string[];
  readonly now: () => number;
  /** Per network/serial operation. */
  readonly timeoutMs: number;
  /** The user the service runs as (systemd/metergate.service User=). */
  readonly serviceUser: string;
  /** Results of earlier checks, for checks that build on them (broker on meters). */
  readonly results: CheckResult[];
}

export interface DoctorCheck {
  readonly name: string;
  readonly needsConfig: boolean;
  run(env: DoctorEnv): Promise<CheckResult[]>;
}

export const pass = (check: string, detail: string): CheckResult => ({ check, status: 'pass', detail });
export const warn = (check: string, detail: string, fix?: string): CheckResult => ({ check, status: 'warn', detail, ...(fix ? { fix } : {}) });
export const fail = (check: string, detail: string, fix: string): CheckResult => ({ check, status: 'fail', detail, fix });
export const skip = (check: string, detail: string): CheckResult => ({ check, status: 'skip', detail });

export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
