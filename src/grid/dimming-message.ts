// A dimming event as the grid_dimming_event message (uplink/schemas/grid_dimming_event.json).
// Pure.
import type { DimmingEvent } from '../store/grid-dimming.js';

export type DimmingPhase = 'started' | 'confirmed' | 'late' | 'ended';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function dimmingMessage(e: DimmingEvent, phase: DimmingPhase, ids: { readonly organizationId: string; readonly resourceId: string }, publishedAtMs: number): Record<string, unknown> {
  return {
    message_type: 'grid_dimming_event',
    resource_id: ids.resourceId,
    organization_id: ids.organizationId,
    published_at: new Date(publishedAtMs).toISOString(),
    event_id: e.id,
    phase,
    started_at: new Date(e.startedAtMs).toISOString(),
    ended_at: iso(e.endedAtMs),
    limit_w: Math.round(e.limitW),
    cause: e.cause,
    confirmed_at: iso(e.confirmedAtMs),
    late: e.late,
    connectors: e.connectors.map((c) => ({ charge_point_id: c.charge_point_id, connector_id: c.connector_id, share_a: c.share_a, in_force_a: c.in_force_a, confirmed_at: iso(c.confirmed_at_ms) })),
  };
}
