// metergate command line: one sub-command per file in src/cli/, registered here (src/cli.ts
// checks the Node first).
import { Command } from 'commander';
import { VERSION } from '../version.js';

type Register = (program: Command) => void;

// Each sub-command's module is imported only when that sub-command runs (or for the
// full help): `metergate run` must not carry the code of doctor, forecast evaluation,
// price import, scan or the simulator in its resident memory (docs/uplink.md, Figures).
const COMMANDS: Record<string, () => Promise<Register>> = {
  run: async () => (await import('./run.js')).registerRunCommand,
  config: async () => (await import('./config.js')).registerConfigCommands,
  sim: async () => (await import('./sim.js')).registerSimCommand,
  token: async () => (await import('./token.js')).registerTokenCommands,
  scan: async () => (await import('./scan.js')).registerScanCommand,
  doctor: async () => (await import('./doctor.js')).registerDoctorCommand,
  demo: async () => (await import('./demo.js')).registerDemoCommand,
  prices: async () => (await import('./prices.js')).registerPricesCommands,
  forecast: async () => (await import('./forecast.js')).registerForecastCommands,
  firstboot: async () => (await import('./firstboot.js')).registerFirstBootCommand,
  outbox: async () => (await import('./outbox.js')).registerOutboxCommands,
  charger: async () => (await import('./charger.js')).registerChargerCommands,
};

// --version loads the native modules to report them; it is answered before any sub-command loads.
if (process.argv[2] === '--version' || process.argv[2] === '-V') {
  const { versionReport } = await import('./version.js');
  process.stdout.write(`${versionReport()}\n`);
  process.exit(0);
}

const program = new Command()
  .name('metergate')
  .description('Edge gateway: Modbus meters -> SQLite -> TLS MQTT; day-ahead prices; session pricing and forecasts over HTTP')
  .version(VERSION, '-V, --version', 'print the versions of metergate, Node, SQLite and the native modules');

const invoked = process.argv[2];
const wanted = invoked !== undefined && Object.hasOwn(COMMANDS, invoked) ? [COMMANDS[invoked]] : Object.values(COMMANDS);
for (const load of wanted) (await load())(program);

await program.parseAsync(process.argv);
