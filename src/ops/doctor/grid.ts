// doctor: the grid operator's control signal (§14a, docs/grid-limits.md). With the daemon
// running, what its grid control says (/status.json grid_control: the signal read or lost, the
// limit, an event not confirmed in time); without it, the input read once here (the daemon
// would hold a GPIO line, so only then), with what the contacts mean.
import type { GridControlView } from '../observability/views.js';
import { controlSignalTypes } from '../../grid/index.js';
import type { SignalReading } from '../../grid/control-signal.js';
import { patternLimit } from '../../planning/dimmed-limit.js';
import { createLogger } from '../../log.js';
import { fetchDaemonStatus } from './meters.js';
import { fail, pass, warn, type CheckResult, type DoctorCheck } from './types.js';

const FIX_INPUT = 'check the wiring from the control box to the input and grid_control.input (docs/grid-limits.md#wiring-the-control-box); GPIO: `gpioinfo`, `gpioget <chip> <line>`; Modbus: the module answers on its bus and unit';

export const gridCheck: DoctorCheck = {
  name: 'grid control',
  needsConfig: true,
  async run(env) {
    const config = env.config!;
    const settings = config.grid_control;
    if (!settings) return [];
    const status = (await fetchDaemonStatus(config, env.timeoutMs)) as { grid_control?: GridControlView | null } | null;
    const g = status?.grid_control;
    if (g) {
      const results: CheckResult[] = [];
      if (g.signal === 'lost') results.push(fail('grid control', `the running daemon cannot read the control box (${g.input}): ${g.signal_reason ?? ''}; on_signal_lost ${g.on_signal_lost}${g.dimmed ? `, dimmed to ${g.limit_w} W meanwhile` : ''}`, FIX_INPUT));
      if (g.event?.late) results.push(warn('grid control', `dimming event ${g.event.id} (since ${g.event.started_at}) was not confirmed by every connector within grid_control.reaction_deadline_s`, 'see the Fuse controller section of the status page for the connector that did not confirm (docs/planning.md#the-fuse-controller)'));
      if (results.length === 0) results.push(pass('grid control', `${g.input}: read; ${g.dimmed ? `dimmed to ${g.limit_w} W` : 'not dimmed'} (P_min,14a ${g.minimum_w} W)`));
      return results;
    }
    // No daemon answering: read the input once.
    const type = controlSignalTypes().forType(settings.input.type);
    if (!type) return [fail('grid control', `input type ${settings.input.type} is not known`, 'grid_control.input.type: gpio or modbus')];
    const source = (await type.load())({ config, input: settings.input, logger: createLogger('fatal'), now: env.now });
    let first: SignalReading | null = null;
    try {
      await Promise.race([source.start((r) => void (first ??= r)), new Promise((r) => setTimeout(r, env.timeoutMs))]);
      const deadline = Date.now() + env.timeoutMs;
      while (first === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await source.stop();
    }
    const reading = first as SignalReading | null;
    if (reading === null) return [fail('grid control', `${source.describe()}: no reading within ${env.timeoutMs} ms`, FIX_INPUT)];
    if (reading.kind === 'lost') return [fail('grid control', `${reading.reason}; on_signal_lost ${settings.on_signal_lost}`, FIX_INPUT)];
    const patterns = settings.patterns.map((p) => ({ contacts: p.contacts, limit: typeof p.limit === 'string' ? p.limit : p.limit.power_kw * 1000 }));
    const limit = patternLimit(reading.contacts, patterns);
    const meaning = limit === 'none' ? 'not dimmed' : limit === 'minimum' ? 'dimmed to P_min,14a' : `dimmed to ${limit} W`;
    return [pass('grid control', `${source.describe()}: contacts ${reading.contacts.map((c) => (c ? 'closed' : 'open')).join(', ')} = ${meaning}`)];
  },
};
