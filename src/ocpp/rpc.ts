// ocpp-rpc as the central system uses it, without the validators it builds at load for
// every subprotocol it knows. Requiring the library (lib/server.js, lib/client.js) runs
// lib/standard-validators.js, which parses its OCPP 2.0.1 and 2.1 schemas (1.6 MB of JSON)
// into two ajv instances: 3 MB of V8 heap kept for good, about 6.5 MB of RSS and seconds
// of CPU at start on a loaded board, whether or not a 2.0.1 charger ever connects. ocpp1.6
// and ocpp2.0.1 are spoken, each with our own validator (validator.ts; the 2.0.1 one is built
// at the first 2.0.1 message, not before), so the standard list is put in require's cache as
// those two before the library is first required: ocpp-rpc clients or servers in the same
// process (a test's strict charger) still find both. ocpp2.1 is not spoken.
// Every module of the daemon takes ocpp-rpc from here, never `from 'ocpp-rpc'`. And not
// through the package's index either: it requires lib/validator.js, which loads ocpp-rpc's own
// copy of ajv (validator.ts says why the daemon's validator does without it); the server and
// createRPCError are required from their own files.
// The load-time cost: https://github.com/mikuso/ocpp-rpc/blob/042e695e4d3a4d024e5416f68025c8232ddfb1da/lib/standard-validators.js
import { createRequire, Module } from 'node:module';
import type * as OcppRpc from 'ocpp-rpc';
import { ocpp16StrictValidator, ocpp201StrictValidator } from './validator.js';

const require = createRequire(import.meta.url);

/** Puts [our ocpp1.6 validator, our lazy ocpp2.0.1 one] in require's cache as the standard list, unless ocpp-rpc's is loaded already (then this changes nothing). */
function withoutStandardValidators(): void {
  const path = require.resolve('ocpp-rpc/lib/standard-validators.js');
  if (require.cache[path]) return;
  const stub = new Module(path);
  stub.filename = path;
  stub.loaded = true;
  stub.exports = [ocpp16StrictValidator(), ocpp201StrictValidator()];
  require.cache[path] = stub;
}

withoutStandardValidators();
export const RPCServer = require('ocpp-rpc/lib/server.js') as typeof OcppRpc.RPCServer;
export const { createRPCError } = require('ocpp-rpc/lib/util.js') as Pick<typeof OcppRpc, 'createRPCError'>;
export type RPCServer = OcppRpc.RPCServer;
/** A charge point's side (the demo's simulated charger, src/sim/charger.ts), same validators. */
export const RPCClient = require('ocpp-rpc/lib/client.js') as typeof OcppRpc.RPCClient;
export type RPCClient = OcppRpc.RPCClient;
