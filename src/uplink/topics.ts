// Topics: {prefix}/resources/{resource_id}/{measurements|heartbeats|boot_notifications|network_scans|grid_dimming_events}.
import type { MessageType } from './validate.js';

const SUFFIX: Record<MessageType, string> = {
  measurement: 'measurements',
  heartbeat: 'heartbeats',
  boot_notification: 'boot_notifications',
  network_scan: 'network_scans',
  grid_dimming_event: 'grid_dimming_events',
};

export function topicFor(prefix: string, resourceId: string, type: MessageType): string {
  return `${prefix.replace(/\/+$/, '')}/resources/${resourceId}/${SUFFIX[type]}`;
}
