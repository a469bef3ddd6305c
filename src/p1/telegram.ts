// Parses one framed P1 telegram (text from '/' to '!') into its identification and COSEM
// objects. Pure. Strict: a line that is not an object, a value line of the one before it, or
// empty makes the whole telegram invalid (DSMR 2.2/3.0 have no CRC: this is their only check).

/** One value of a COSEM object: the raw text and, where it has one, its unit ('kWh', 'V', ...). */
export interface ObisValue {
  readonly raw: string;
  readonly unit: string | null;
}

export interface Telegram {
  /** The identification line without '/', e.g. `ISk5\2MT382-1000`. */
  readonly identification: string;
  /** Three-letter manufacturer flag (IEC 62056-21), e.g. `ISk`, `KFM`. */
  readonly manufacturerFlag: string;
  /** The model part of the identification, after the baud character and an optional `\N`. */
  readonly model: string;
  /** Every object by OBIS reference (`1-0:1.8.1`), each with its values in order. */
  readonly objects: ReadonlyMap<string, readonly ObisValue[]>;
}

export class TelegramParseError extends Error {}

const IDENTIFICATION = /^\/([A-Za-z]{3})(.)(?:\\.)?(.*)$/;
const OBJECT = /^(\d{1,3}-\d{1,3}:\d{1,3}\.\d{1,3}\.\d{1,3})((?:\([^()]*\))+)$/;
const CONTINUATION = /^((?:\([^()]*\))+)$/;

export function parseTelegram(text: string): Telegram {
  const lines = text.split(/\r?\n/);
  const id = IDENTIFICATION.exec(lines[0] ?? '');
  if (!id) throw new TelegramParseError(`not a P1 identification line: ${JSON.stringify((lines[0] ?? '').slice(0, 40))}`);
  if (lines[lines.length - 1] !== '!') throw new TelegramParseError('telegram does not end with "!"');
  const objects = new Map<string, ObisValue[]>();
  let last: ObisValue[] | null = null;
  // lines[1] is the empty line after the identification.
  for (let i = 1; i < lines.length - 1; i++) {
    const line = lines[i];
    if (line === '' && i === 1) continue;
    const object = OBJECT.exec(line);
    if (object) {
      last = values(object[2]);
      objects.set(object[1], last);
      continue;
    }
    // DSMR 2.2/3.0 give the gas reading on the line after its 0-1:24.3.0 header.
    const continuation = CONTINUATION.exec(line);
    if (continuation && last) {
      last.push(...values(continuation[1]));
      continue;
    }
    throw new TelegramParseError(`line ${i + 1} is not a COSEM object: ${JSON.stringify(line.slice(0, 40))}`);
  }
  return { identification: lines[0].slice(1), manufacturerFlag: id[1], model: id[3] || id[1], objects };
}

function values(text: string): ObisValue[] {
  return [...text.matchAll(/\(([^()]*)\)/g)].map((m) => {
    const star = m[1].indexOf('*');
    return star < 0 ? { raw: m[1], unit: null } : { raw: m[1].slice(0, star), unit: m[1].slice(star + 1) };
  });
}
