// Who wants to know when prices changed (the forecaster recomputes after each sync).

export interface PricesUpdated {
  readonly marketArea: string;
  readonly fromMs: number;
  readonly toMs: number;
  readonly periods: number;
}

export type PricesUpdatedListener = (event: PricesUpdated) => void | Promise<void>;

export class PriceUpdates {
  private readonly listeners = new Set<PricesUpdatedListener>();

  /** Returns a function that unsubscribes. */
  subscribe(listener: PricesUpdatedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls every listener; a failing listener is reported, never thrown to the sync. */
  async publish(event: PricesUpdated, onError: (err: unknown) => void): Promise<void> {
    for (const listener of this.listeners) {
      try {
        await listener(event);
      } catch (err) {
        onError(err);
      }
    }
  }
}
