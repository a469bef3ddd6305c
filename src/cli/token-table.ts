// `metergate token list` as a table (pure): a header line naming each column, then one row
// per token, the columns as wide as their widest cell. The name comes last, unpadded: it
// is free text and may hold spaces.
import type { TokenInfo } from '../store/tokens.js';

const iso = (ms: number) => new Date(ms).toISOString();

export function tokenTable(tokens: readonly TokenInfo[]): string[] {
  const rows = [
    ['ID', 'TYPE', 'CREATED (UTC)', 'STATE', 'NAME'],
    ...tokens.map((t) => [t.id, t.type, iso(t.createdAtMs), t.revokedAtMs === null ? 'active' : `revoked ${iso(t.revokedAtMs)}`, t.name]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
}
