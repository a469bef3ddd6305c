// The store's part of /healthz (pure): whether the database takes writes, and what waits in
// memory while it does not (src/uplink/recorder.ts, docs/uplink.md).
import type { ComponentHealth, StoreView } from './views.js';

export function storeHealth(s: StoreView): ComponentHealth {
  const dropped = s.pendingDroppedTotal > 0 ? `; ${s.pendingDroppedTotal} dropped since start (queue full)` : '';
  if (s.writable) return { status: 'ok', reason: `writes ok${dropped}` };
  const since = s.failingSinceMs !== null ? ` since ${new Date(s.failingSinceMs).toISOString()}` : '';
  const waiting = `${s.pendingWrites} of at most ${s.maxPendingWrites} write(s) waiting in memory`;
  // A full queue drops the oldest reading for every new one: data is lost.
  if (s.pendingWrites >= s.maxPendingWrites) return { status: 'down', reason: `cannot write (${s.reason ?? 'unknown'})${since}; queue full, dropping the oldest readings; ${waiting}${dropped}` };
  // Polling and publishing go on; readings wait in memory and are written when it takes writes again.
  return { status: 'degraded', reason: `cannot write (${s.reason ?? 'unknown'})${since}; ${waiting}${dropped}` };
}
