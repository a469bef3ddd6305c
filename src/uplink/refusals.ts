// What a refused PUBACK (MQTT 5 reason code >= 0x80) means for the message (pure).
// Only three codes say the broker will never take this message as it is: the row is
// then held (table outbox_held) per topic until someone fixes the broker or the config.
// Every other code (0x80 unspecified, 0x83 implementation specific, 0x97 quota exceeded,
// codes a future broker invents) may pass: the row stays where it is and is sent again
// after a pause. Nothing is deleted before a PUBACK with a code below 0x80.
export const PERMANENT_REFUSALS: ReadonlySet<number> = new Set([
  0x87, // not authorized (the broker's ACL)
  0x90, // topic name invalid
  0x99, // payload format invalid
]);

export type RefusalKind = 'permanent' | 'transient';

export function refusalKind(reasonCode: number): RefusalKind {
  return PERMANENT_REFUSALS.has(reasonCode) ? 'permanent' : 'transient';
}

/** What an operator does about a refused topic (doctor, logs). */
export function refusalFix(reasonCode: number | null, topic: string, username: string | undefined): string {
  const user = username ?? '<the gateway\'s user>';
  if (reasonCode === 0x90) return `the broker rejects the topic name ${topic}: check mqtt.topic_prefix and meters[].resource_id, then \`metergate outbox retry\``;
  if (reasonCode === 0x99) return `the broker rejects the payload format on ${topic}: ask the broker operator (messages are JSON, UTF-8), then \`metergate outbox retry\``;
  return `ask the broker operator to allow publishing: in the mosquitto acl_file, under \`user ${user}\`, add the line \`topic write ${topic}\` and reload the broker (SIGHUP, \`systemctl reload mosquitto\`); then \`metergate outbox retry\``;
}
