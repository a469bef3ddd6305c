// `metergate demo` on a machine with nothing set up: schema-valid measurement JSON shows
// up on its own (the README promises within 30 s), and Ctrl-C ends it cleanly.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { messageProblems } from '../../src/uplink/validate.js';

describe('metergate demo', () => {
  it('prints schema-valid measurements from the embedded broker and stops on SIGINT', { timeout: 90_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const until = Date.now() + 60_000;
      while (!/\[measurement, schema-valid\]\n\{\n\s+"message_type": "measurement"/.test(out)) {
        if (child.exitCode !== null || Date.now() > until) throw new Error(`no measurement from the demo:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).not.toMatch(/SCHEMA PROBLEMS/);
      // Checked here too, not only by the demo's own label: the printed JSON is a contract measurement.
      const printed = /\[measurement, schema-valid\]\n(\{\n[\s\S]*?\n\})\n/.exec(out);
      expect(printed, out).not.toBeNull();
      const measurement = JSON.parse(printed![1]) as { data: { metrics: Array<{ name: string; unit: string }> } };
      expect(messageProblems('measurement', measurement)).toEqual([]);
      expect(measurement.data.metrics.map((m) => `${m.name}:${m.unit}`)).toEqual(expect.arrayContaining(['total_active_power:W', 'active_energy_import:Wh']));
      expect(out).toMatch(/boot_notifications {2}\[boot_notification, retained, schema-valid\]|boot_notifications {2}\[boot_notification, schema-valid\]/);
      child.kill('SIGINT');
      expect(await exited, out).toBe(0);
      expect(out).toMatch(/stopping; received \d+ measurement/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
