import type { Command } from 'commander';

export function registerFirstBootCommand(program: Command): void {
  program
    .command('firstboot')
    .description('Take metergate.yaml (and the files it names) from the boot partition into /etc/metergate; run at boot by metergate-firstboot.service')
    .option('--root <dir>', 'act on the root file system in DIR (image building, tests); the service is not started', '/')
    .action(async (opts: { root: string }) => {
      const { runFirstBoot, startMetergateService } = await import('../firstboot/apply.js');
      const live = opts.root === '/';
      const result = runFirstBoot({ root: opts.root });
      switch (result.outcome) {
        case 'nothing':
          process.stdout.write(`metergate firstboot: nothing to do (${result.message})\n`);
          return;
        case 'applied': {
          const took = `metergate firstboot: took ${result.bootDir}/metergate.yaml into /etc/metergate/config.yaml${result.moves.map((m) => `, ${m.name} to ${m.target}`).join('')}`;
          const failure = live ? startMetergateService() : undefined;
          if (failure === undefined) {
            process.stdout.write(`${took}${live ? '; started metergate.service' : ''}\n`);
            return;
          }
          // The configuration is in place (a later boot or `systemctl start` uses it); the
          // unit fails so that `systemctl --failed` and the journal show it.
          process.stderr.write(`${took}; starting metergate.service FAILED: ${failure}\n`);
          process.exit(1);
        }
        case 'refused':
          process.stderr.write(
            `metergate firstboot: ${result.bootDir}/metergate.yaml NOT used (written to ${result.bootDir}/metergate-error.txt):\n${result.problems.map((p) => `  ${p}`).join('\n')}\n`,
          );
          process.exit(78);
      }
    });
}
