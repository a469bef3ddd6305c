// Settings whose default depends on another setting (JSON Schema defaults cannot say so).
import type { Config } from './types.js';

/** How far the nearest stored reading beyond a session edge may be: `sessions.max_edge_gap_ms`, default three poll intervals. */
export function sessionMaxEdgeGapMs(config: Pick<Config, 'poll' | 'sessions'>): number {
  return config.sessions?.max_edge_gap_ms ?? 3 * config.poll.interval_ms;
}
