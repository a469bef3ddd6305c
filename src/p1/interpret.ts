// One framed telegram to what the gateway does with it (pure), the same for the source, scan
// and doctor: electricity to publish, whole but without electricity (a heat interface unit),
// a layout not understood (lines that are not objects), or values refused.
import { hasElectricity, p1Identity, p1Reading, type P1Identity, type P1Reading } from './measurements.js';
import { parseTelegram, TelegramParseError, type Telegram } from './telegram.js';

interface Whole {
  readonly telegram: Telegram;
  readonly reading: P1Reading;
  readonly identity: P1Identity;
}

export type TelegramOutcome =
  | (Whole & { readonly kind: 'ok' })
  | (Whole & { readonly kind: 'no_electricity' })
  | { readonly kind: 'unknown_layout'; readonly error: string }
  | { readonly kind: 'invalid'; readonly error: string };

export function interpretTelegram(text: string): TelegramOutcome {
  let telegram: Telegram;
  try {
    telegram = parseTelegram(text);
  } catch (err) {
    if (!(err instanceof TelegramParseError)) throw err;
    return { kind: 'unknown_layout', error: err.message };
  }
  try {
    const reading = p1Reading(telegram);
    const identity = p1Identity(telegram);
    return hasElectricity(reading) ? { kind: 'ok', telegram, reading, identity } : { kind: 'no_electricity', telegram, reading, identity };
  } catch (err) {
    if (!(err instanceof TelegramParseError)) throw err;
    return { kind: 'invalid', error: err.message };
  }
}
