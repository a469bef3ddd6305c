// Pure read planner: coalesces a meter's wanted registers into the fewest read requests.
import type { MeterProfile, RegisterSpec } from '../config/types.js';
import { registerCount } from './decode.js';

export type FunctionCode = 3 | 4;

/** One read request and where each wanted value sits in its answer. */
export interface PlannedRead {
  readonly functionCode: FunctionCode;
  readonly address: number;
  readonly count: number;
  readonly values: ReadonlyArray<{ readonly spec: RegisterSpec; readonly offset: number }>;
}

export type PlannerLimits = Pick<MeterProfile, 'function_code' | 'max_registers_per_request' | 'max_gap_registers'>;

/** The registers a meter reads: the profile's default set plus the configured extras, in profile order. */
export function selectRegisters(profile: MeterProfile, extraMetrics: readonly string[] = []): RegisterSpec[] {
  const extras = new Set(extraMetrics);
  return profile.registers.filter((r) => r.default || extras.has(r.metric));
}

/**
 * Greedy left-to-right coalescing per function code: a value joins the current block when
 * the gap before it is at most max_gap_registers (the gap is read through and ignored) and
 * the block stays within max_registers_per_request. For intervals on a line this greedy
 * choice gives the fewest blocks. A gap costs 2 bytes a register on the wire, a new request
 * about 20 characters (request, response header, CRCs, two 3.5-character gaps) plus the
 * meter's turnaround, hence the default gap limit of 10.
 */
export function planReads(registers: readonly RegisterSpec[], limits: PlannerLimits): PlannedRead[] {
  const maxCount = Math.min(125, limits.max_registers_per_request);
  const byFc = new Map<FunctionCode, RegisterSpec[]>();
  for (const spec of registers) {
    const fc = (spec.function_code ?? limits.function_code) as FunctionCode;
    const list = byFc.get(fc) ?? [];
    list.push(spec);
    byFc.set(fc, list);
  }
  const plans: PlannedRead[] = [];
  for (const fc of [...byFc.keys()].sort()) {
    const specs = [...byFc.get(fc)!].sort((a, b) => a.address - b.address || registerCount(b.type) - registerCount(a.type));
    let start = -1;
    let end = -1; // exclusive
    let members: RegisterSpec[] = [];
    const flush = () => {
      if (members.length === 0) return;
      const s = start;
      plans.push({ functionCode: fc, address: s, count: end - s, values: members.map((spec) => ({ spec, offset: spec.address - s })) });
      members = [];
    };
    for (const spec of specs) {
      const specEnd = spec.address + registerCount(spec.type);
      if (registerCount(spec.type) > maxCount) throw new RangeError(`register ${spec.metric} is wider than max_registers_per_request`);
      if (members.length > 0 && spec.address - end <= limits.max_gap_registers && Math.max(end, specEnd) - start <= maxCount) {
        end = Math.max(end, specEnd);
        members.push(spec);
        continue;
      }
      flush();
      start = spec.address;
      end = specEnd;
      members = [spec];
    }
    flush();
  }
  return plans;
}

/** A naive plan for comparison (benchmarks): one request per value, as many readers do. */
export function planOnePerValue(registers: readonly RegisterSpec[], limits: Pick<MeterProfile, 'function_code'>): PlannedRead[] {
  return registers.map((spec) => ({
    functionCode: (spec.function_code ?? limits.function_code) as FunctionCode,
    address: spec.address,
    count: registerCount(spec.type),
    values: [{ spec, offset: 0 }],
  }));
}
