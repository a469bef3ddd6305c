import type { Command } from 'commander';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('Run the gateway on embedded defaults: simulated meters, an embedded TLS MQTT broker, a temporary data dir; prints the live messages')
    .option('--duration <seconds>', 'stop after this many seconds (default: until Ctrl-C)')
    .option('--compact', 'one line per message')
    .action(async (opts: { duration?: string; compact?: boolean }) => {
      // Loaded on use: the broker (aedes) and certificate code have no place in `run`'s memory.
      const { runDemo } = await import('../demo/run.js');
      await runDemo({ out: process.stdout, durationMs: opts.duration === undefined ? undefined : Number(opts.duration) * 1000, compact: Boolean(opts.compact) });
      process.exit(0);
    });
}
