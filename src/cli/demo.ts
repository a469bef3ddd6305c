import type { Command } from 'commander';
import { runDemo } from '../demo/run.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('Run the gateway on embedded defaults: simulated meters, an embedded TLS MQTT broker, a temporary data dir; prints the live messages')
    .option('--duration <seconds>', 'stop after this many seconds (default: until Ctrl-C)')
    .option('--compact', 'one line per message')
    .action(async (opts: { duration?: string; compact?: boolean }) => {
      await runDemo({ out: process.stdout, durationMs: opts.duration === undefined ? undefined : Number(opts.duration) * 1000, compact: Boolean(opts.compact) });
      process.exit(0);
    });
}
