import { Option, type Command } from 'commander';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('Run the gateway on embedded defaults: simulated meters, an embedded TLS MQTT broker, a simulated OCPP charger with two cars, real recorded prices moved onto today, a temporary data dir; prints the live messages, the forecast, the plan, the priced session and API tokens to try')
    .option('--duration <seconds>', 'stop after this many seconds (default: until Ctrl-C)')
    .option('--json', 'print each message in full (its JSON, pretty-printed) under its line; default: one line per message')
    // One line per message is the default now; --compact (its earlier switch) is still accepted.
    .addOption(new Option('--compact').hideHelp())
    .option('--top-up <seconds>', 'how long the short top-up on the charger\'s connector 2 charges before it leaves and is priced', '60')
    .action(async (opts: { duration?: string; json?: boolean; topUp: string }) => {
      // Loaded on use: the broker (aedes) and certificate code have no place in `run`'s memory.
      const { runDemo } = await importDemo();
      await runDemo({ out: process.stdout, durationMs: opts.duration === undefined ? undefined : Number(opts.duration) * 1000, fullJson: Boolean(opts.json), topUpMs: Number(opts.topUp) * 1000 });
      process.exit(0);
    });
}

/** The demo-only packages: optionalDependencies, so a gateway's package or `npm ci --omit=optional` leaves them out. */
export const DEMO_PACKAGES = ['aedes', 'selfsigned'] as const;

async function importDemo(): Promise<typeof import('../demo/run.js')> {
  try {
    return await import('../demo/run.js');
  } catch (err) {
    const missing = DEMO_PACKAGES.find((name) => (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(`'${name}'`));
    if (missing === undefined) throw err;
    process.stderr.write(
      `metergate demo: the demo-only packages (${DEMO_PACKAGES.join(', ')}) are not installed: gateways do not get them.\n` +
        '  fix: in a source checkout `npm ci` installs them (then `npm run demo`); on a gateway the demo is not needed (try `metergate doctor`)\n',
    );
    process.exit(1);
  }
}
