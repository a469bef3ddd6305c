// ENTSO-E Transparency Platform REST client for day-ahead prices (document type A44).
// The security token travels in the query string, so URLs are never logged.
import type { PricePeriod } from '../../domain.js';
import type { Logger } from '../../log.js';
import { eicAt, registryBoundariesMs, type Market } from '../markets.js';
import { realLimiterClock, SlidingWindowLimiter, type LimiterClock } from '../rate-limit.js';
import { localDate, localDayStartMs } from '../timezone.js';
import { EntsoeDocumentError, parseA44, type A44Result } from './entsoe-xml.js';
import { httpGet, type HttpGet } from './http-get.js';

export interface EntsoeOptions {
  readonly baseUrl: string;
  readonly securityToken: string;
  readonly maxRequestsPerMinute: number;
  readonly timeoutMs: number;
  /** Attempts per request (first try included) on 429, 5xx, network errors and truncated bodies. */
  readonly maxAttempts?: number;
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
}

export interface EntsoeDeps {
  readonly logger: Logger;
  readonly clock?: LimiterClock;
  /** node:https by default (not fetch(): http-get.ts says why). */
  readonly get?: HttpGet;
}

/** The request cannot succeed by retrying (bad token, refused parameters). */
export class EntsoeRequestError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'EntsoeRequestError';
  }
}

/** Every attempt failed with a retryable problem. */
export class EntsoeUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EntsoeUnavailableError';
  }
}

export interface FetchResult {
  readonly periods: PricePeriod[];
  /** Requests sent (each chunk once, retries not counted). */
  readonly requests: number;
  /** Chunks the platform answered with "no matching data". */
  readonly noDataChunks: number;
}

/** yyyyMMddHHmm in UTC, as periodStart/periodEnd want it. */
export function entsoeTimeParam(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace(/[-:T]/g, '');
}

/**
 * Splits [fromMs, toMs) into requests of at most one local calendar year (the
 * platform's limit), also where the market's EIC changes (DE-AT-LU -> DE-LU).
 */
export function planRequests(market: Market, fromMs: number, toMs: number): Array<{ fromMs: number; toMs: number; eic: string }> {
  const cuts = new Set(registryBoundariesMs(market, fromMs, toMs));
  const firstYear = Number(localDate(market.timeZone, fromMs).slice(0, 4));
  for (let y = firstYear + 1; ; y++) {
    const jan1 = localDayStartMs(market.timeZone, `${y}-01-01`);
    if (jan1 >= toMs) break;
    cuts.add(jan1);
  }
  const edges = [fromMs, ...[...cuts].filter((c) => c > fromMs && c < toMs).sort((a, b) => a - b), toMs];
  const out: Array<{ fromMs: number; toMs: number; eic: string }> = [];
  for (let i = 0; i + 1 < edges.length; i++) out.push({ fromMs: edges[i], toMs: edges[i + 1], eic: eicAt(market, edges[i]) });
  return out;
}

const sleepFor = (clock: LimiterClock, ms: number) => (ms > 0 ? clock.sleep(ms) : Promise.resolve());

export class EntsoeSource {
  readonly name = 'entsoe';
  private readonly limiter: SlidingWindowLimiter;
  private readonly clock: LimiterClock;
  private readonly get: HttpGet;

  constructor(
    private readonly options: EntsoeOptions,
    private readonly deps: EntsoeDeps,
  ) {
    this.clock = deps.clock ?? realLimiterClock;
    this.get = deps.get ?? httpGet;
    this.limiter = new SlidingWindowLimiter(options.maxRequestsPerMinute, 60_000, this.clock);
  }

  /** Day-ahead prices of a market for delivery in [fromMs, toMs), at native resolution. */
  async fetchDayAhead(market: Market, fromMs: number, toMs: number, signal?: AbortSignal): Promise<FetchResult> {
    const periods: PricePeriod[] = [];
    let noDataChunks = 0;
    const plan = planRequests(market, fromMs, toMs);
    for (const req of plan) {
      const result = await this.request(market, req, signal);
      if (result.kind === 'no-data') {
        noDataChunks++;
        continue;
      }
      for (const s of result.skipped) this.deps.logger.warn({ market: market.code, from: new Date(s.startMs).toISOString(), reason: s.reason }, 'ENTSO-E series not taken');
      for (const p of result.periods) if (p.startMs >= fromMs && p.startMs < toMs) periods.push(p);
    }
    return { periods, requests: plan.length, noDataChunks };
  }

  private request(market: Market, req: { fromMs: number; toMs: number; eic: string }, signal?: AbortSignal): Promise<A44Result> {
    return this.requestDocument(market, req, { documentType: 'A44', in_Domain: req.eic, out_Domain: req.eic }, (body) => parseA44(body, market), signal);
  }

  /**
   * One request of any document type for [req.fromMs, req.toMs) with the rate limit,
   * retries and error rules of every platform request; `parse` decodes the body (a
   * malformed body is retried as truncated). Used by the exogenous source (A65, A69).
   */
  async requestDocument<T>(
    market: Market,
    req: { fromMs: number; toMs: number; eic: string },
    params: Readonly<Record<string, string>>,
    parse: (body: string) => T,
    signal?: AbortSignal,
  ): Promise<T> {
    const url = new URL(this.options.baseUrl);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    url.searchParams.set('periodStart', entsoeTimeParam(req.fromMs));
    url.searchParams.set('periodEnd', entsoeTimeParam(req.toMs));
    url.searchParams.set('securityToken', this.options.securityToken);
    const what = { market: market.code, documentType: params.documentType, eic: req.eic, periodStart: entsoeTimeParam(req.fromMs), periodEnd: entsoeTimeParam(req.toMs) };
    const maxAttempts = this.options.maxAttempts ?? 6;
    const base = this.options.backoffBaseMs ?? 2_000;
    const cap = this.options.backoffMaxMs ?? 120_000;
    let lastProblem = '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      await abortable(this.limiter.acquire(), signal);
      let retryAfterMs: number | undefined;
      try {
        const timeout = AbortSignal.timeout(this.options.timeoutMs);
        const res = await this.get(url, { signal: signal ? AbortSignal.any([timeout, signal]) : timeout, headers: { accept: 'application/xml, text/xml' } });
        if (res.status === 429 || res.status >= 500) {
          retryAfterMs = parseRetryAfter(res.header('retry-after'), this.clock.now());
          res.discard();
          lastProblem = `HTTP ${res.status}`;
        } else {
          const body = await res.text(); // throws when the connection drops mid-body
          if (res.status === 401 || res.status === 403) throw new EntsoeRequestError(`HTTP ${res.status}: the security token was refused`, res.status);
          if (res.status >= 400 && !body.includes('Acknowledgement_MarketDocument')) throw new EntsoeRequestError(`HTTP ${res.status}: ${body.slice(0, 200)}`, res.status);
          try {
            return parse(body); // parsed here so a truncated body is retried
          } catch (err) {
            if (err instanceof EntsoeDocumentError && /not well-formed/.test(err.message)) lastProblem = `truncated or malformed body (${err.message})`;
            else throw err;
          }
        }
      } catch (err) {
        if (err instanceof EntsoeRequestError || err instanceof EntsoeDocumentError || signal?.aborted) throw err;
        lastProblem = `${(err as Error).name}: ${(err as Error).message}`;
      }
      if (attempt === maxAttempts) break;
      const backoff = Math.min(cap, base * 2 ** (attempt - 1));
      const delay = Math.max(retryAfterMs ?? 0, backoff / 2 + Math.random() * (backoff / 2));
      this.deps.logger.warn({ ...what, attempt, problem: lastProblem, retryInMs: Math.round(delay) }, 'ENTSO-E request failed; retrying');
      await abortable(sleepFor(this.clock, delay), signal);
    }
    throw new EntsoeUnavailableError(`ENTSO-E ${what.documentType} ${what.market} ${what.periodStart}..${what.periodEnd}: ${lastProblem} after ${maxAttempts} attempts`);
  }
}

/** Rejects as soon as `signal` aborts (the daemon is stopping), else settles with `p`. */
function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Retry-After in seconds or as an HTTP date; capped at 10 minutes. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  const s = Number(value);
  const ms = Number.isFinite(s) ? s * 1000 : Date.parse(value) - nowMs;
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 600_000) : undefined;
}
