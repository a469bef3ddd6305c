// How the site's headroom (limit − other load, per phase) is shared between the connectors
// the gateway plans at once. Pure.
//
// The rule (docs/planning.md "Several chargers on one site"):
// 1. Every connector sharing the site (a target in force and a car plugged in: an open
//    transaction) needs at least its minimum current to charge at all. When the headroom
//    cannot give every one its minimum, the earliest departures get theirs first; a
//    connector whose minimum does not fit any more gets 0 A (it waits).
// 2. What is left is shared equally between the connectors that charge, each up to its own
//    maximum (the charger's, or the car's observed one); what one cannot take goes to the
//    others (water-filling), so no current is wasted on a connector that cannot use it.
// Equal shares keep every car charging; the plan of each then puts its share into its own
// cheapest periods.

export interface SharingConnector {
  readonly key: string;
  readonly maxCurrentA: number;
  readonly minCurrentA: number;
  readonly departureMs: number;
}

/** Current per phase each connector may plan with, by key (0: it may not charge now). */
export function shareSiteCurrent(headroomA: number, connectors: readonly SharingConnector[]): Map<string, number> {
  const shares = new Map<string, number>(connectors.map((c) => [c.key, 0]));
  let leftA = Math.max(0, headroomA);
  // 1. Minimums, earliest departure first (ties: the key, so the order is stable).
  const byDeparture = [...connectors].sort((a, b) => a.departureMs - b.departureMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const charging: SharingConnector[] = [];
  for (const c of byDeparture) {
    const minA = Math.max(0, Math.min(c.minCurrentA, c.maxCurrentA));
    if (c.maxCurrentA <= 0 || minA > leftA + 1e-9) continue;
    shares.set(c.key, minA);
    leftA -= minA;
    charging.push(c);
  }
  // 2. The rest equally, up to each maximum: the smallest remaining room first.
  const open = charging.filter((c) => c.maxCurrentA - shares.get(c.key)! > 1e-9).sort((a, b) => a.maxCurrentA - shares.get(a.key)! - (b.maxCurrentA - shares.get(b.key)!));
  while (open.length > 0 && leftA > 1e-9) {
    const equalA = leftA / open.length;
    const c = open[0]!;
    const roomA = c.maxCurrentA - shares.get(c.key)!;
    if (roomA <= equalA) {
      shares.set(c.key, c.maxCurrentA);
      leftA -= roomA;
      open.shift();
    } else {
      for (const o of open) shares.set(o.key, shares.get(o.key)! + equalA);
      leftA = 0;
    }
  }
  return shares;
}

/** A connector sharing the site, with what the others must count it at when it is not shared as usual (connector-control.ts countedA). */
export interface CountedConnector extends SharingConnector {
  /** null: shared as usual; a number: a fixed load of that many A per phase (its state unknown, or its lowering overdue). */
  readonly countedA: number | null;
}

/**
 * `of`'s share of the site when the others may be counted at a fixed current (the fuse
 * controller's rule, docs/planning.md "The fuse controller"): every other connector with a
 * counted current takes that much off the headroom first; `of` shares the rest with the
 * others shared as usual. `of` itself is always shared as usual (its own share is what it
 * should be asked for, whatever it holds now). 0 when `of` is not among the connectors.
 */
export function shareWithCounted(headroomA: number, connectors: readonly CountedConnector[], of: string): number {
  let fixedA = 0;
  const shared: SharingConnector[] = [];
  for (const c of connectors) {
    if (c.key !== of && c.countedA !== null) fixedA += Math.max(0, c.countedA);
    else shared.push(c);
  }
  return shareSiteCurrent(headroomA - fixedA, shared).get(of) ?? 0;
}
