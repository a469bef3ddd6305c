// ENTSO-E provider of exogenous series: the day-ahead total load forecast (A65, processType
// A01, outBiddingZone_Domain) and the day-ahead wind and solar forecast (A69, A01,
// in_Domain; B16 solar, B18 wind offshore, B19 wind onshore) of a market, and the
// week-ahead total load forecast (A65, processType A31: daily minimum and maximum) for the
// same days and the week after them (the forecaster's D+2..D+7), through the
// price client's requests (rate limit, retries, token never logged) and request plan (at
// most a local year per request, cut where the market's EIC changes).
import type { Market } from '../markets.js';
import { EntsoeSource, planRequests } from '../sources/entsoe.js';
import type { Logger } from '../../log.js';
import { parseGlDocument, type GlResult } from './entsoe-gl.js';
import type { ExogenousRegistry, ExogenousSource } from './registry.js';
import type { ExogenousPoint, ExogenousSeriesName } from './series.js';

const DAY_MS = 86_400_000;
/** Days after a fetched range whose week-ahead load forecast is asked too (D+2..D+7 of a fetch through tomorrow). */
const WEEK_AHEAD_DAYS = 7;

export class EntsoeExogenousSource implements ExogenousSource {
  readonly name = 'entsoe-exogenous';
  readonly series: readonly ExogenousSeriesName[] = ['load', 'solar', 'wind_onshore', 'wind_offshore', 'load_week_ahead_min', 'load_week_ahead_max'];

  constructor(
    private readonly client: EntsoeSource,
    private readonly logger?: Logger,
  ) {}

  async fetchDayAhead(market: Market, fromMs: number, toMs: number, signal?: AbortSignal): Promise<{ periods: ExogenousPoint[]; requests: number; noDataChunks: number }> {
    const periods: ExogenousPoint[] = [];
    let requests = 0;
    let noDataChunks = 0;
    for (const req of planRequests(market, fromMs, toMs)) {
      const documents: Array<Record<string, string>> = [
        { documentType: 'A65', processType: 'A01', outBiddingZone_Domain: req.eic },
        { documentType: 'A69', processType: 'A01', in_Domain: req.eic },
      ];
      for (const params of documents) {
        requests++;
        const result = await this.client.requestDocument(market, req, params, (body) => parseGlDocument(body, market.code), signal);
        if (result.kind === 'no-data') {
          // The load forecast decides completeness (backfill.ts): its "no data" is what a pending chunk reports.
          if (params.documentType === 'A65') noDataChunks++;
          continue;
        }
        for (const p of result.points) if (p.startMs >= fromMs && p.startMs < toMs) periods.push(p);
      }
    }
    // The week ahead, asked over the same days and WEEK_AHEAD_DAYS after them: a fetch that
    // reaches tomorrow brings the days after it too. Best effort: its "no data" (zones that
    // do not publish it) never makes a chunk pending.
    const weekAheadToMs = toMs + WEEK_AHEAD_DAYS * DAY_MS;
    for (const req of planRequests(market, fromMs, weekAheadToMs)) {
      requests++;
      let result: GlResult;
      try {
        result = await this.client.requestDocument(market, req, { documentType: 'A65', processType: 'A31', outBiddingZone_Domain: req.eic }, (body) => parseGlDocument(body, market.code), signal);
      } catch (err) {
        // Best effort: a failed or undecodable week-ahead document (e.g. a week with a clock
        // change, whose P1D period is not 7 x 24 h) never costs the day-ahead series above.
        if (signal?.aborted) throw err;
        this.logger?.warn({ err, market: market.code }, 'exogenous: week-ahead load forecast not used');
        continue;
      }
      if (result.kind === 'no-data') continue;
      // Only week-ahead series: a server answering the day-ahead document instead must not extend `load`.
      for (const p of result.points) if (p.series.startsWith('load_week_ahead') && p.startMs >= fromMs && p.startMs < weekAheadToMs) periods.push(p);
    }
    return { periods, requests, noDataChunks };
  }
}

/** On whenever the ENTSO-E price source is (prices.source entsoe with a token). */
export function registerEntsoeExogenous(registry: ExogenousRegistry): void {
  registry.register({
    kind: 'entsoe',
    create: ({ config, logger }) => {
      const p = config.prices;
      if (p.source !== 'entsoe' || !p.entsoe.security_token) return null;
      // Its own client, so its requests count against the same per-minute limit only when
      // they run: the sync runs one job at a time (prices, then these).
      const client = new EntsoeSource(
        { baseUrl: p.entsoe.base_url, securityToken: p.entsoe.security_token, maxRequestsPerMinute: p.entsoe.max_requests_per_minute, timeoutMs: p.entsoe.timeout_ms },
        { logger },
      );
      return new EntsoeExogenousSource(client, logger);
    },
  });
}

