import type { Command } from 'commander';
import { exitCodeOf, formatResult, runDoctor } from '../ops/doctor/run.js';
import { DEFAULT_CONFIG_PATH } from './config.js';

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('Check config, serial ports, meters, broker (TLS, login, publish rights), clock, disk, database and prices; one PASS/FAIL line each with the fix')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .option('--timeout-ms <ms>', 'timeout per network operation', (v) => Number(v), 5000)
    .option('--service-user <name>', 'the user the service runs as (User= in metergate.service), whose access to ports and files is checked', 'metergate')
    .option('--json', 'print the results as JSON')
    .action(async (opts: { config: string; timeoutMs: number; serviceUser: string; json?: boolean }) => {
      const results = await runDoctor({
        configPath: opts.config,
        serviceUser: opts.serviceUser,
        timeoutMs: opts.timeoutMs,
        onResult: opts.json ? undefined : (r) => process.stdout.write(`${formatResult(r)}\n`),
      });
      if (opts.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
      const failed = results.filter((r) => r.status === 'fail').length;
      if (!opts.json) process.stdout.write(failed ? `\n${failed} check(s) failed.\n` : '\nAll checks passed.\n');
      process.exitCode = exitCodeOf(results);
    });
}
