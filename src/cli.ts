#!/usr/bin/env node
// metergate command line: one sub-command per file in src/cli/, registered here.
import { Command } from 'commander';
import { registerConfigCommands } from './cli/config.js';
import { registerDemoCommand } from './cli/demo.js';
import { registerDoctorCommand } from './cli/doctor.js';
import { registerForecastCommands } from './cli/forecast.js';
import { registerPricesCommands } from './cli/prices.js';
import { registerRunCommand } from './cli/run.js';
import { registerScanCommand } from './cli/scan.js';
import { registerSimCommand } from './cli/sim.js';
import { registerTokenCommands } from './cli/token.js';
import { VERSION } from './version.js';

const program = new Command()
  .name('metergate')
  .description('Edge gateway: Modbus meters -> SQLite -> TLS MQTT; day-ahead prices; session pricing and forecasts over HTTP')
  .version(VERSION);

registerRunCommand(program);
registerConfigCommands(program);
registerSimCommand(program);
registerTokenCommands(program);
registerScanCommand(program);
registerDoctorCommand(program);
registerDemoCommand(program);
registerPricesCommands(program);
registerForecastCommands(program);

await program.parseAsync(process.argv);
