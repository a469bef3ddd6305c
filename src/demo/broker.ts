// An embedded MQTT broker on TLS for the demo (aedes; MQTT 3.1.1, so the demo config
// selects protocol_version 4), with one user name and password.
import { createServer, type Server } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { Aedes } from 'aedes';

export interface EmbeddedBroker {
  readonly port: number;
  stop(): Promise<void>;
}

export async function startEmbeddedBroker(opts: { cert: string; key: string; username: string; password: string; port?: number }): Promise<EmbeddedBroker> {
  const aedes = await Aedes.createBroker({
    authenticate: (_client, username, password, done) => done(null, username === opts.username && password?.toString() === opts.password),
  });
  const server: Server = createServer({ cert: opts.cert, key: opts.key }, (socket) => aedes.handle(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    async stop() {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
