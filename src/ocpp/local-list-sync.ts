// Brings a charger's local authorization list to the configured id tags (local-auth-list.ts)
// over SendLocalList, and keeps the version it accepted (store/ocpp-local-lists.ts): after
// each BootNotification of a charger with configured id tags, and when an operator asks
// (HTTP API, CLI). A charger that answers VersionMismatch to a differential update gets the
// full list once.
//
// Error policy: never throws; the outcome (the charger's answer, its CallError, not
// connected, timeout) is returned as charger-operations.ts gives it. The accepted version is
// written through the store write queue (store/write-queue.ts).
import type { Logger } from '../log.js';
import type { LocalListStore } from '../store/ocpp-local-lists.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import type { ChargerOperationsPort, OperationOptions, OperationOutcome } from './charger-operations.js';
import { localListUpdate, type LocalListUpdateType, type SendLocalListRequest } from './local-auth-list.js';
import { parentIdTagOf } from './id-tags.js';

type Requester = NonNullable<OperationOptions['by']>;

export type LocalListSyncResult =
  | { readonly kind: 'no-list' }
  | { readonly kind: 'in-step'; readonly listVersion: number }
  | { readonly kind: 'sent'; readonly request: SendLocalListRequest; readonly outcome: OperationOutcome };

export class LocalListSync {
  constructor(
    private readonly ops: ChargerOperationsPort,
    private readonly lists: LocalListStore,
    private readonly writes: StoreWriteQueue,
    private readonly nowMs: () => number,
    private readonly logger: Logger,
  ) {}

  /** The version the charger last accepted from us, or null. */
  heldVersion(chargePointId: string): number | null {
    return this.lists.get(chargePointId)?.listVersion ?? null;
  }

  /** One sync per charger at a time (a boot right after a reconnect, an operator's at once): each starts from what the last one stored. */
  private readonly running = new Map<string, Promise<unknown>>();

  /** `by`: an operator's sync is refused while a fuse-protecting call is in flight, the gateway's own waits (charger-operations.ts). */
  sync(chargePointId: string, asked: LocalListUpdateType | 'auto', by: Requester = 'operator'): Promise<LocalListSyncResult> {
    const before = this.running.get(chargePointId) ?? Promise.resolve();
    const next = before.catch(() => undefined).then(() => this.syncNow(chargePointId, asked, by));
    this.running.set(chargePointId, next);
    void next.finally(() => {
      if (this.running.get(chargePointId) === next) this.running.delete(chargePointId);
    }).catch(() => undefined);
    return next;
  }

  private async syncNow(chargePointId: string, asked: LocalListUpdateType | 'auto', by: Requester): Promise<LocalListSyncResult> {
    const auth = this.ops.charger(chargePointId)?.auth;
    if (auth === undefined || auth === 'accept_all') return { kind: 'no-list' };
    const held = this.lists.get(chargePointId);
    const parentOf = (idTag: string) => parentIdTagOf(auth, idTag);
    let update = localListUpdate(auth.id_tags, held, asked, parentOf);
    if (!update) return { kind: 'in-step', listVersion: held!.listVersion };
    let outcome = await this.ops.call(chargePointId, 'SendLocalList', { ...update.request }, { by });
    if (outcome.kind === 'answered' && outcome.answer.status === 'VersionMismatch' && update.request.updateType === 'Differential') {
      this.logger.info({ charge_point_id: chargePointId, list_version: update.request.listVersion }, 'local authorization list: differential update refused for its version; sending the full list');
      update = localListUpdate(auth.id_tags, held, 'Full', parentOf)!;
      outcome = await this.ops.call(chargePointId, 'SendLocalList', { ...update.request }, { by });
    }
    if (outcome.kind === 'answered' && outcome.answer.status === 'Accepted') {
      const { listVersion } = update.request;
      const idTags = update.idTags;
      // Not awaited: while the store refuses writes (disk full) the write waits in the queue, and
      // neither the operator's request nor this charger's next sync should wait with it.
      this.writes
        .run(`local list of ${chargePointId}`, () => this.lists.put(chargePointId, { listVersion, idTags, updatedAtMs: this.nowMs() }))
        .catch((err: unknown) => this.logger.error({ err, charge_point_id: chargePointId, list_version: listVersion }, 'local authorization list version not stored'));
      this.logger.info({ charge_point_id: chargePointId, list_version: listVersion, update_type: update.request.updateType, id_tags: idTags.length }, 'local authorization list accepted by the charger');
    }
    return { kind: 'sent', request: update.request, outcome };
  }
}
