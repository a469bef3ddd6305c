// ENTSO-E provider of exogenous series: the day-ahead total load forecast (A65, processType
// A01, outBiddingZone_Domain) and the day-ahead wind and solar forecast (A69, A01,
// in_Domain; B16 solar, B18 wind offshore, B19 wind onshore) of a market, through the
// price client's requests (rate limit, retries, token never logged) and request plan (at
// most a local year per request, cut where the market's EIC changes).
import type { Market } from '../markets.js';
import { EntsoeSource, planRequests } from '../sources/entsoe.js';
import { parseGlDocument } from './entsoe-gl.js';
import type { ExogenousRegistry, ExogenousSource } from './registry.js';
import type { ExogenousPoint, ExogenousSeriesName } from './series.js';

export class EntsoeExogenousSource implements ExogenousSource {
  readonly name = 'entsoe-exogenous';
  readonly series: readonly ExogenousSeriesName[] = ['load', 'solar', 'wind_onshore', 'wind_offshore'];

  constructor(private readonly client: EntsoeSource) {}

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
      return new EntsoeExogenousSource(client);
    },
  });
}

