// A TLS man in the middle in front of the test broker that can hold back every PUBACK
// while passing everything else (CONNACK, PINGRESP): the broker looks alive and the link
// stays up, but no publish is ever acknowledged. It terminates TLS with the broker's own
// server certificate, so clients keep verifying against the test CA.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { TlsBroker } from './mosquitto.js';

export interface PubackEater {
  readonly url: string;
  /** While true, PUBACK packets from the broker are dropped. */
  swallow: boolean;
  /** PUBACKs dropped so far. */
  readonly swallowed: number;
  /** Cuts every client connection (the client reconnects). */
  dropConnections(): void;
  stop(): Promise<void>;
}

const PUBACK = 4;

/** Splits a byte stream into whole MQTT control packets; keeps the rest for the next chunk. */
function splitter(onPacket: (packet: Buffer) => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      let remaining = 0;
      let multiplier = 1;
      let i = 1;
      for (; i < buf.length && i <= 4; i++) {
        remaining += (buf[i] & 0x7f) * multiplier;
        multiplier *= 128;
        if ((buf[i] & 0x80) === 0) break;
      }
      if (i >= buf.length) return; // length bytes not all here yet
      const total = i + 1 + remaining;
      if (buf.length < total) return;
      onPacket(buf.subarray(0, total));
      buf = buf.subarray(total);
    }
  };
}

export async function startPubackEater(broker: TlsBroker): Promise<PubackEater> {
  const sockets = new Set<TLSSocket>();
  let swallowed = 0;
  const state = { swallow: false };
  const server = createServer({ key: readFileSync(join(broker.dir, 'server.key')), cert: readFileSync(join(broker.dir, 'server.crt')) }, (client) => {
    const upstream = connect({ host: '127.0.0.1', port: broker.port, ca: readFileSync(broker.caFile), servername: 'localhost' });
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.on(
      'data',
      splitter((packet) => {
        if (state.swallow && packet[0] >> 4 === PUBACK) swallowed++;
        else client.write(packet);
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `mqtts://localhost:${port}`,
    get swallow() {
      return state.swallow;
    },
    set swallow(v: boolean) {
      state.swallow = v;
    },
    get swallowed() {
      return swallowed;
    },
    dropConnections() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
