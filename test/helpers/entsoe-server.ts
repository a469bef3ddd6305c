// A local HTTP server standing in for the ENTSO-E Transparency Platform REST API.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PlatformRequest {
  readonly params: Readonly<Record<string, string>>;
}

/** What to answer: a body (200), an HTTP status, a truncated body, or hold the request open. */
export type PlatformAnswer =
  | { kind: 'xml'; body: string; status?: number }
  | { kind: 'status'; status: number; retryAfterS?: number }
  | { kind: 'truncated'; body: string }
  | { kind: 'hold' };

export class FakePlatform {
  readonly requests: PlatformRequest[] = [];
  private server: Server | undefined;
  private held: ServerResponse[] = [];
  /** Answers consumed in order before `respond` is asked. */
  readonly queue: PlatformAnswer[] = [];

  constructor(public respond: (req: PlatformRequest) => PlatformAnswer) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/api`;
  }

  async stop(): Promise<void> {
    for (const r of this.held) r.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const request = { params: Object.fromEntries(url.searchParams) };
    this.requests.push(request);
    const answer = this.queue.shift() ?? this.respond(request);
    switch (answer.kind) {
      case 'xml':
        res.writeHead(answer.status ?? 200, { 'content-type': 'text/xml' });
        res.end(answer.body);
        return;
      case 'status':
        res.writeHead(answer.status, answer.retryAfterS === undefined ? {} : { 'retry-after': String(answer.retryAfterS) });
        res.end();
        return;
      case 'truncated': {
        const bytes = Buffer.from(answer.body);
        res.writeHead(200, { 'content-type': 'text/xml', 'content-length': String(bytes.length) });
        res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
        return;
      }
      case 'hold':
        this.held.push(res);
        return;
    }
  }
}

/** Parses yyyyMMddHHmm (UTC). */
export function paramMs(v: string): number {
  return Date.UTC(Number(v.slice(0, 4)), Number(v.slice(4, 6)) - 1, Number(v.slice(6, 8)), Number(v.slice(8, 10)), Number(v.slice(10, 12)));
}
