// Parses one framed telegram (text from '/' to '!') into its identification and COSEM
// objects. Pure. Two layouts share the frame: DSMR P1 (`1-0:1.8.1(...)`) and IEC 62056-21
// mode D / EDL21 "D0" as German meters push it on their optical port (`1-0:1.8.0*255(...)`,
// group letters such as `0-0:C.1.0`, an STX before the first object of a mode C readout).
// Control bytes at the start or end of a line (an STX before the first object, a stray byte
// before a model name) are not part of it and are removed; one inside a line is a bit error.
// Strict: a line that is not an object, a value line of the one before it, or empty
// makes the whole telegram invalid (telegrams without CRC have no other check).

/** One value of a COSEM object: the raw text and, where it has one, its unit ('kWh', 'V', ...). */
export interface ObisValue {
  readonly raw: string;
  readonly unit: string | null;
}

/** `dsmr`: P1 objects; `iec62056-21`: objects with a `*F` billing-period suffix (mode D / D0); `sml`: an SML value list (sml/interpret.ts). */
export type TelegramLayout = 'dsmr' | 'iec62056-21' | 'sml';

export interface Telegram {
  /** The identification line without '/', e.g. `ISk5\2MT382-1000`, control bytes removed. */
  readonly identification: string;
  /** Three-letter manufacturer flag (IEC 62056-21), e.g. `ISk`, `KFM`. */
  readonly manufacturerFlag: string;
  /** The model part of the identification, after the baud character and an optional `\N`. */
  readonly model: string;
  /** Every object by OBIS reference without its `*255` suffix (`1-0:1.8.1`), each with its values in order. */
  readonly objects: ReadonlyMap<string, readonly ObisValue[]>;
  readonly layout: TelegramLayout;
}

export class TelegramParseError extends Error {}

const IDENTIFICATION = /^\/([A-Za-z]{3})(.)(?:\\.)?(.*)$/;
// A-B: optional (mode C readouts may leave them out: `1.8.0(...)`); C, D, E: digits or the
// IEC 62056-61 letters (C, F, L, P), E optional too (IEC 62056-21 reduced ids: `F.F(...)`,
// `C.1(...)` in an Itron EM214 readout); *F: billing period, 255 = current.
const OBJECT = /^(?:(\d{1,3})-(\d{1,3}):)?([0-9A-Z]{1,3}\.[0-9A-Z]{1,3}(?:\.[0-9A-Z]{1,3})?)(?:\*(\d{1,3}))?((?:\([^()]*\))+)$/;
const CONTINUATION = /^((?:\([^()]*\))+)$/;
// eslint-disable-next-line no-control-regex
const EDGE_CONTROL = /^[\x00-\x1f\x7f]+|[\x00-\x1f\x7f]+$/g;

export function parseTelegram(text: string): Telegram {
  const lines = text.split('\n').map((line) => line.replace(EDGE_CONTROL, ''));
  // The identification line may carry control bytes after its '/' too (Iskra MIE5T).
  lines[0] = `/${(lines[0] ?? '').replace(/^\//, '').replace(EDGE_CONTROL, '')}`;
  const id = IDENTIFICATION.exec(lines[0]);
  if (!id) throw new TelegramParseError(`not a P1 identification line: ${JSON.stringify(lines[0].slice(0, 40))}`);
  if (lines[lines.length - 1] !== '!') throw new TelegramParseError('telegram does not end with "!"');
  const objects = new Map<string, ObisValue[]>();
  let last: ObisValue[] | null = null;
  let suffixed = false;
  // lines[1] is the empty line after the identification.
  for (let i = 1; i < lines.length - 1; i++) {
    const line = lines[i];
    if (line === '' && i === 1) continue;
    const object = OBJECT.exec(line);
    if (object) {
      const [, a, b, cde, period, valueText] = object;
      // A billing period other than the current one (`*01`) is history, not this reading.
      if (period !== undefined) suffixed = true;
      last = values(valueText);
      if (period === undefined || period === '255') objects.set(`${a ?? '1'}-${b ?? '0'}:${cde}`, last);
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
  return { identification: lines[0].slice(1), manufacturerFlag: id[1], model: (id[3].replace(EDGE_CONTROL, '').trim() || id[1]), objects, layout: suffixed ? 'iec62056-21' : 'dsmr' };
}

function values(text: string): ObisValue[] {
  return [...text.matchAll(/\(([^()]*)\)/g)].map((m) => {
    const star = m[1].indexOf('*');
    return star < 0 ? { raw: m[1], unit: null } : { raw: m[1].slice(0, star), unit: m[1].slice(star + 1) };
  });
}
