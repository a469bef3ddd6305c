// Why a P1 meter's telegrams are not used, in one line with the fix (pure): for /healthz, the
// status page, doctor and scan alike. Judged from what the line delivered since the last whole
// telegram with electricity: the drops by reason, whether bytes came at all, and whether whole
// telegrams came without electricity objects.
import type { TelegramDrops } from './listen.js';
import { crcRequired, isSmlLine, type P1Line } from './line-settings.js';
import type { P1Identity, P1Reading } from './measurements.js';

/** What came on the line (counts since the last good telegram, or during one listen). */
export interface LineObservation {
  readonly line: P1Line;
  readonly bytes: number;
  readonly drops: Readonly<TelegramDrops>;
  /** SML's escape sequence (four ESC bytes) came: an SML meter, whatever the line is set to. */
  readonly smlSeen?: boolean;
  /** The bus asks an IEC 62056-21 mode C meter (`mode: C`): silence is no answer to the sign-on. */
  readonly modeC?: boolean;
}

export type P1Problem = 'missing_crc' | 'line_settings' | 'no_electricity' | 'unknown_layout' | 'bit_errors' | 'invalid_values' | 'silent';

export interface P1Diagnosis {
  readonly problem: P1Problem;
  /** `<what>: <fix>` in one line. */
  readonly text: string;
}

/** The dominant reason nothing usable came, or null when nothing was dropped and bytes came. */
export function diagnoseP1(o: LineObservation, busRef = 'the bus'): P1Diagnosis | null {
  const n = (k: keyof LineObservation['drops']) => o.drops[k] ?? 0;
  if (o.modeC) return diagnoseModeC(o);
  const other = o.line === '115200 8N1' ? '9600 7E1' : isSmlLine(o.line) ? '9600 7E1 (a text meter) or 115200 8N1' : '115200 8N1';
  if (o.smlSeen && !isSmlLine(o.line)) {
    return { problem: 'line_settings', text: `SML (binary) on a text line (${o.line}): an SML meter, set line: 9600 8N1 on ${busRef}` };
  }
  if (isSmlLine(o.line) && o.bytes > 0 && !o.smlSeen && Object.keys(o.drops).length === 0) {
    return { problem: 'line_settings', text: `bytes but no SML file at 9600 8N1: a meter sending text (DSMR, IEC 62056-21 D0)? set line: 9600 7E1 (D0, DSMR 2.2/3.0), 115200 8N1 (DSMR 4+) on ${busRef}, or let \`metergate scan --p1\` try each` };
  }
  if (n('no_electricity') > 0) {
    return { problem: 'no_electricity', text: 'whole telegrams without electricity objects (a heat interface unit or an M-Bus-only device): nothing to publish as electricity; give its M-Bus channels a resource each (`channels:`), see docs/p1.md' };
  }
  if (n('missing_crc') > 0 && crcRequired(o.line)) {
    return { problem: 'missing_crc', text: `telegrams without CRC on a DSMR 4+ line (${o.line}): a DSMR 2.2/3.0 or IEC 62056-21 mode D meter sends none, set line: 9600 7E1 (mode D also 2400 7E1) on ${busRef}; a bridge that strips the CRC: put it in raw mode` };
  }
  if (n('unknown_layout') > 0) {
    return { problem: 'unknown_layout', text: 'whole telegrams in a layout metergate does not know (lines that are not OBIS objects): capture one with `metergate scan --p1 --json` and report it' };
  }
  // At a wrong speed the bytes are noise: no frame closes (garbled, cut, overlong); bit errors
  // on a right line mostly break the CRC of a frame that does close.
  const framing = n('garbled') + n('overlong') + n('truncated');
  if (framing > 0 && framing > n('crc')) {
    return { problem: 'line_settings', text: `bytes but no whole telegram at ${o.line}: wrong line settings, set line: ${other} on ${busRef} (DSMR 4+: 115200 8N1; DSMR 2.2/3.0 and mode D: 9600 7E1; mode D also 2400 7E1), or let \`metergate scan --p1\` try each` };
  }
  if (n('crc') > 0) {
    const fix = isSmlLine(o.line) ? 'seat the optical reading head squarely on the meter\'s interface, shield it from daylight' : 'a shorter P1 cable or another adapter';
    return { problem: 'bit_errors', text: `telegrams dropped for bit errors (${n('crc')} failed their CRC): ${fix}` };
  }
  if (n('invalid') > 0) return { problem: 'invalid_values', text: 'telegrams with values or units metergate refuses (a garbled or unexpected value): see the log line "P1 telegram dropped" for the object' };
  if (o.bytes === 0 && isSmlLine(o.line)) return { problem: 'silent', text: "nothing on the line: check the reading head sits on the meter's optical interface (the upper one on most eHZ), and that the meter pushes (some need 'InF on' via the PIN)" };
  if (o.bytes === 0) return { problem: 'silent', text: 'nothing on the line: check the P1 cable and that the port is enabled; P1 is inverted TTL (plain USB-serial adapters need an inverting cable)' };
  return null;
}

/** A mode C meter is asked: it answers the sign-on, or does not; its readout's BCC holds, or not. */
function diagnoseModeC(o: LineObservation): P1Diagnosis | null {
  const n = (k: keyof LineObservation['drops']) => o.drops[k] ?? 0;
  if (n('bcc') > 0 && n('bcc') >= n('no_answer')) {
    return { problem: 'bit_errors', text: `mode C readouts dropped for bit errors (${n('bcc')} failed their BCC): seat the optical reading head squarely on the meter's interface, shield it from daylight` };
  }
  if (n('garbled') + n('overlong') > 0 && n('garbled') + n('overlong') >= n('no_answer')) {
    return { problem: 'line_settings', text: 'answers to the sign-on request that are no mode C readout (an identification without a mode C rate: a mode A or B meter, or another protocol): see the log line "P1 telegram dropped"; a meter that pushes by itself needs no mode: C' };
  }
  if (n('no_answer') > 0 && n('no_answer') >= n('truncated')) {
    return { problem: 'silent', text: "no answer to the sign-on request (/?! at 300 baud 7E1): check the reading head sits on the meter's optical interface and its cable; a meter that pushes by itself (DSMR, mode D, SML) needs no mode: C" };
  }
  if (n('truncated') > 0) {
    return { problem: 'line_settings', text: 'the meter named itself but no whole readout came in time at the rate it proposed: check the reading head (bytes lost at the higher rate), and that the head or adapter supports that rate' };
  }
  if (n('unknown_layout') > 0) return { problem: 'unknown_layout', text: 'mode C readouts in a layout metergate does not know (lines that are not OBIS objects): report the log line "P1 telegram dropped"' };
  if (n('invalid') > 0) return { problem: 'invalid_values', text: 'mode C readouts with values or units metergate refuses: see the log line "P1 telegram dropped" for the object' };
  return null;
}

/**
 * Why an SML meter's samples carry energy but no power, in one line with the fix; null when
 * they carry power (or it is no SML meter). German meters without their PIN entered send the
 * reduced data set: the energy registers (often in whole kWh), no power.
 */
export function powerAbsent(identity: P1Identity, reading: P1Reading): string | null {
  if (identity.layout !== 'SML' || reading.metrics.some((m) => m.name === 'total_active_power')) return null;
  const sent = reading.metrics.map((m) => m.name).join(', ');
  return `no power in the meter's data, only ${sent}: a meter with no PIN entered sends only this reduced data set (power is 1-0:16.7.0); ask the grid operator (Messstellenbetreiber) for the PIN, enter it with a torch at the optical sensor and switch on the full data set ('InF on'), see docs/p1.md`;
}
