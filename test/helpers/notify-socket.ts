import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The service manager's end of the sd_notify protocol, for tests: a unix datagram socket
 * that records each message and, like systemd, closes any file descriptors passed with it
 * (systemd-notify's BARRIER=1 waits for exactly that). Node cannot open datagram unix
 * sockets, so this side runs in python3.
 */
const RECEIVER = `
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print(json.dumps({"listening": True}), flush=True)
while True:
    msg, anc, flags, addr = s.recvmsg(65536, socket.CMSG_SPACE(64 * 4))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            for i in range(0, len(data) - len(data) % 4, 4):
                os.close(int.from_bytes(data[i:i + 4], sys.byteorder))
    print(json.dumps({"message": msg.decode("utf-8", "replace")}), flush=True)
`;
import { peer } from './peers.js';

export const hasPython3 = peer('python3', spawnSync('python3', ['-c', 'pass']).status === 0);
export const hasSystemdNotify = peer('systemd-notify', spawnSync('systemd-notify', ['--version']).status === 0);

export interface NotifySocket {
  readonly path: string;
  /** Messages received so far, e.g. "READY=1\nSTATUS=running". */
  readonly messages: string[];
  /** Resolves once a message containing `field` (e.g. "WATCHDOG=1") has arrived. */
  waitFor(field: string): Promise<string>;
  close(): Promise<void>;
}

export async function startNotifySocket(): Promise<NotifySocket> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-notify-'));
  const path = join(dir, 'notify.sock');
  const child: ChildProcess = spawn('python3', ['-c', RECEIVER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const messages: string[] = [];
  const waiters: Array<{ field: string; resolve: (m: string) => void }> = [];
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`notify receiver exited ${code}`)));
    lines.on('line', (line) => {
      const parsed = JSON.parse(line) as { listening?: boolean; message?: string };
      if (parsed.listening) return resolve();
      if (parsed.message === undefined) return;
      messages.push(parsed.message);
      for (const w of [...waiters]) {
        if (parsed.message.split('\n').includes(w.field)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(parsed.message);
        }
      }
    });
  });
  return {
    path,
    messages,
    waitFor(field) {
      const found = messages.find((m) => m.split('\n').includes(field));
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ field, resolve }));
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
