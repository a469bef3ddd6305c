// doctor: runs the checks in order and formats one line per check.
import { ConfigError, loadConfig } from '../../config/load.js';
import { brokerCheck } from './broker.js';
import { chargersCheck } from './chargers.js';
import { fuseCheck } from './fuse.js';
import { gridCheck } from './grid.js';
import { clockCheck } from './clock.js';
import { configCheck } from './config.js';
import { databaseCheck } from './database.js';
import { diskCheck } from './disk.js';
import { filesCheck } from './files.js';
import { metersCheck } from './meters.js';
import { outboxCheck } from './outbox.js';
import { pricesCheck } from './prices.js';
import { serialCheck } from './serial.js';
import { errorMessage, fail, skip, type CheckResult, type DoctorCheck, type DoctorEnv } from './types.js';

/** In order: later checks build on earlier ones (the broker test publishes only for answering meters). */
export const ALL_CHECKS: readonly DoctorCheck[] = [configCheck, filesCheck, serialCheck, metersCheck, brokerCheck, clockCheck, diskCheck, databaseCheck, outboxCheck, pricesCheck, chargersCheck, fuseCheck, gridCheck];

export interface DoctorOptions {
  readonly configPath: string;
  readonly timeoutMs?: number;
  readonly serviceUser?: string;
  readonly now?: () => number;
  readonly checks?: readonly DoctorCheck[];
  readonly env?: NodeJS.ProcessEnv;
  /** Called as each line is known, so a slow check does not hide the ones before it. */
  readonly onResult?: (result: CheckResult) => void;
}

export async function runDoctor(options: DoctorOptions): Promise<CheckResult[]> {
  let config: DoctorEnv['config'] = null;
  let configProblems: readonly string[] = [];
  try {
    config = loadConfig(options.configPath, options.env ?? process.env);
  } catch (err) {
    configProblems = err instanceof ConfigError ? err.problems : [errorMessage(err)];
  }
  const results: CheckResult[] = [];
  const env: DoctorEnv = {
    configPath: options.configPath,
    config,
    configProblems,
    now: options.now ?? (() => Date.now()),
    timeoutMs: options.timeoutMs ?? 5000,
    serviceUser: options.serviceUser ?? 'metergate',
    results,
  };
  for (const check of options.checks ?? ALL_CHECKS) {
    let lines: CheckResult[];
    if (check.needsConfig && !config) lines = [skip(check.name, 'needs a valid config')];
    else {
      try {
        lines = await check.run(env);
      } catch (err) {
        lines = [fail(check.name, `the check itself failed: ${errorMessage(err)}`, 'report this with the output of `metergate doctor`')];
      }
    }
    for (const line of lines) {
      results.push(line);
      options.onResult?.(line);
    }
  }
  return results;
}

const LABEL: Record<CheckResult['status'], string> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' };

/** One line per check: `FAIL  serial rs485-1      /dev/ttyUSB0 does not exist  -> fix: ...`. */
export function formatResult(r: CheckResult): string {
  const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ');
  return `${LABEL[r.status]}  ${r.check.padEnd(18)} ${oneLine(r.detail)}${r.fix ? `  -> fix: ${oneLine(r.fix)}` : ''}`;
}

/** Exit status: 1 when any check failed, else 0 (warnings do not fail). */
export function exitCodeOf(results: readonly CheckResult[]): number {
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}
