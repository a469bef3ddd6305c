// An SML meter on a pty for tests: writes the files of a real recording (test/data/sml), one
// after the other and round again, every periodMs, as a meter pushes them on its optical
// interface. `damage` changes what goes out next (bit errors, cut files) until reset
// (`metergate sim --p1 FILE.hex --p1-line "9600 8N1"` replays them too, without damage).
import { SerialPort } from 'serialport';
import { smlFiles, smlRecording } from './sml-recordings.js';

export interface SmlMeter {
  /** Files written so far. */
  readonly sent: () => number;
  /** Each following file goes out as `f(file, n)` returns it; null: as recorded again. */
  damage(f: ((file: Buffer, n: number) => Buffer) | null): void;
  stop(): Promise<void>;
}

export async function startSmlMeter(path: string, recording: string, periodMs = 250): Promise<SmlMeter> {
  const files = smlFiles(smlRecording(recording));
  if (files.length === 0) throw new Error(`${recording}: no whole SML file`);
  const port = new SerialPort({ path, baudRate: 9600, dataBits: 8, parity: 'none', stopBits: 1, autoOpen: false });
  port.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  let n = 0;
  let damage: ((file: Buffer, n: number) => Buffer) | null = null;
  const timer = setInterval(() => {
    const file = files[n % files.length]!;
    port.write(damage ? damage(file, n) : file);
    n++;
  }, periodMs);
  return {
    sent: () => n,
    damage: (f) => (damage = f),
    async stop() {
      clearInterval(timer);
      if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    },
  };
}
