// doctor: prices cover now (and tomorrow, from the afternoon on) in every region.
import { existsSync } from 'node:fs';
import { databasePath } from '../../store/db.js';
import { withReadOnlyDb } from './read-only-db.js';
import { fail, pass, warn, type CheckResult, type DoctorCheck } from './types.js';

const HOUR_MS = 3_600_000;

/**
 * Price coverage per region: a price must exist for the current period (sessions are
 * priced with it) and, from the afternoon on, for tomorrow (the auction closes at noon
 * CET and ENTSO-E publishes soon after). Read-only on the database.
 */
export const pricesCheck: DoctorCheck = {
  name: 'prices',
  needsConfig: true,
  async run(env) {
    const config = env.config!;
    if (config.prices.source === 'none' || config.prices.regions.length === 0) return [pass('prices', 'price sync disabled (prices.source: none)')];
    const path = databasePath(config.data_dir);
    if (!existsSync(path)) return config.prices.regions.map((r) => warn(`prices ${r}`, 'no database yet: prices are fetched after the first start', 'sudo systemctl start metergate'));
    return withReadOnlyDb(path, ({ db, hasTable: tableExists }) => {
      const hasTable = tableExists('prices');
      const now = env.now();
      return config.prices.regions.map((region): CheckResult => {
        const name = `prices ${region}`;
        const lastEnd = hasTable ? (db.prepare('SELECT MAX(start_ms + duration_s * 1000) FROM prices WHERE market_area = ?').pluck().get(region) as number | null) : null;
        const fix = config.prices.source === 'entsoe' && !config.prices.entsoe.security_token
          ? 'write the ENTSO-E Transparency Platform token to the file prices.entsoe.security_token_file names, then `sudo systemctl restart metergate` (or `sudo metergate prices backfill` to fetch now)'
          : '`sudo metergate prices backfill` fetches what is missing now; check network access to the price source (https://web-api.tp.entsoe.eu) and `journalctl -u metergate | grep price`';
        if (lastEnd === null) return fail(name, 'no prices stored', fix);
        const until = new Date(lastEnd).toISOString();
        if (lastEnd <= now) return fail(name, `prices end ${until}, before now: sessions cannot be priced`, fix);
        // Tomorrow's prices are due by mid-afternoon CET (13:00-14:00 UTC).
        const utcHour = new Date(now).getUTCHours();
        const endOfTomorrowish = now + (48 - utcHour) * HOUR_MS - 3 * HOUR_MS;
        if (utcHour >= 15 && lastEnd < endOfTomorrowish) return warn(name, `prices until ${until}; tomorrow's are not in yet`, fix);
        return pass(name, `prices until ${until}`);
      });
    });
  },
};
