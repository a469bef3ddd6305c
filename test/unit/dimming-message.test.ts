// The grid_dimming_event message (grid/dimming-message.ts) against its schema, and its topic beside the contract's four.
import { describe, expect, it } from 'vitest';
import { dimmingMessage } from '../../src/grid/dimming-message.js';
import { topicFor } from '../../src/uplink/topics.js';
import { messageProblems } from '../../src/uplink/validate.js';

const ids = { organizationId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', resourceId: '0c9a7e51-2f3b-4d6a-8e1c-5b7d9f2a4c60' };
const event = {
  id: 7,
  startedAtMs: Date.parse('2026-01-15T17:00:00Z'),
  endedAtMs: null,
  limitW: 10500,
  cause: 'signal' as const,
  contacts: [true],
  confirmedAtMs: Date.parse('2026-01-15T17:00:00.400Z'),
  late: false,
  connectors: [{ charge_point_id: 'CP-A', connector_id: 1, share_a: 7.6, in_force_a: 7.1, confirmed_at_ms: Date.parse('2026-01-15T17:00:00.400Z') }],
};

describe('grid_dimming_event', () => {
  it('each phase matches its schema', () => {
    for (const phase of ['started', 'confirmed', 'late', 'ended'] as const) {
      expect(messageProblems('grid_dimming_event', dimmingMessage(event, phase, ids, event.startedAtMs + 500))).toEqual([]);
    }
  });
  it('a message without its connectors or with a phase it does not know is refused', () => {
    const m = dimmingMessage(event, 'started', ids, event.startedAtMs);
    expect(messageProblems('grid_dimming_event', { ...m, phase: 'paused' }).length).toBeGreaterThan(0);
    const { connectors: _, ...without } = m;
    expect(messageProblems('grid_dimming_event', without).length).toBeGreaterThan(0);
  });
  it('goes to a topic of its own under the resource', () => {
    expect(topicFor('svc', ids.resourceId, 'grid_dimming_event')).toBe(`svc/resources/${ids.resourceId}/grid_dimming_events`);
    expect(topicFor('svc', ids.resourceId, 'heartbeat')).toBe(`svc/resources/${ids.resourceId}/heartbeats`);
  });
});
