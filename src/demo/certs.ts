// A throw-away certificate authority and a server certificate for localhost, made on the
// spot in pure JavaScript (the `selfsigned` package), so the demo needs no openssl.
import { generate } from 'selfsigned';

export interface DemoCertificates {
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
}

export async function makeDemoCertificates(days = 2): Promise<DemoCertificates> {
  const notBeforeDate = new Date(Date.now() - 3_600_000);
  const notAfterDate = new Date(Date.now() + days * 86_400_000);
  const ca = await generate([{ name: 'commonName', value: 'metergate demo CA' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  return { caCert: ca.cert, serverCert: server.cert, serverKey: server.private };
}
