// A scripted MQTT 5 peer for the PUBACK reason codes mosquitto cannot be made to send
// (0x80 unspecified, 0x83 implementation specific, 0x97 quota exceeded): TLS with a test
// CA, CONNACK to anyone, and each PUBLISH answered with the code the script returns. It
// records what it accepted (code < 0x80), in the order it accepted it. mqtt-packet is
// mqtt.js's own packet codec, declared as a devDependency at the version mqtt locks.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';
import mqttPacket, { type IPublishPacket, type Packet } from 'mqtt-packet';
import { makeCertificates } from './mosquitto.js';

export interface ScriptedPublish {
  readonly topic: string;
  readonly payload: string;
  readonly messageId: string | null;
  /** 1-based count of PUBLISH packets the peer has seen. */
  readonly n: number;
}

export interface ScriptedBroker {
  readonly url: string;
  readonly caFile: string;
  /** Publishes answered with a code below 0x80, in answer order. */
  readonly accepted: ScriptedPublish[];
  /** Every code answered, in order. */
  readonly answered: number[];
  stop(): Promise<void>;
}

/** `answer(publish)` returns the PUBACK reason code for each PUBLISH (n counts from 1). */
export async function startScriptedBroker(answer: (publish: ScriptedPublish) => number): Promise<ScriptedBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-scripted-'));
  const { ca, cert, key } = makeCertificates(dir);
  const accepted: ScriptedPublish[] = [];
  const answered: number[] = [];
  const sockets = new Set<TLSSocket>();
  let n = 0;
  const opts = { protocolVersion: 5 };
  const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket)).on('error', () => socket.destroy());
    const parser = mqttPacket.parser(opts);
    const send = (p: Packet) => socket.write(mqttPacket.generate(p, opts));
    parser.on('packet', (packet: Packet) => {
      if (packet.cmd === 'connect') send({ cmd: 'connack', sessionPresent: false, reasonCode: 0 });
      else if (packet.cmd === 'pingreq') send({ cmd: 'pingresp' });
      else if (packet.cmd === 'disconnect') socket.end();
      else if (packet.cmd === 'publish') {
        const p = packet as IPublishPacket;
        const id = p.properties?.userProperties?.message_id;
        const publish: ScriptedPublish = { topic: p.topic, payload: p.payload.toString(), messageId: Array.isArray(id) ? id[0] : (id ?? null), n: ++n };
        const code = answer(publish);
        answered.push(code);
        if (code < 0x80) accepted.push(publish);
        if (p.qos > 0) send({ cmd: 'puback', messageId: p.messageId, reasonCode: code });
      }
    });
    parser.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `mqtts://localhost:${port}`,
    caFile: ca,
    accepted,
    answered,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
