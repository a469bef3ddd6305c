// What a price sync tells when it stored prices (event prices.updated in events.ts; the
// forecaster recomputes after each).

export interface PricesUpdated {
  readonly marketArea: string;
  readonly fromMs: number;
  readonly toMs: number;
  readonly periods: number;
}
