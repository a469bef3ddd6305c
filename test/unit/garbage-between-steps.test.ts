// ops/garbage-between-steps: a full collection between a computation's steps only when the
// heap plus external memory grew by the threshold since the last one, and nothing without
// --expose-gc. Also run for real in a child Node with --expose-gc: the exposed gc is called
// and gives memory back.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { garbageBetweenSteps } from '../../src/ops/garbage-between-steps.js';

describe('garbageBetweenSteps', () => {
  it('collects once the live bytes grew by the threshold since the last collection, then measures from after it', () => {
    let live = 10_000_000;
    let collections = 0;
    const garbage = garbageBetweenSteps(2_000_000, { gc: () => { collections++; live = 10_500_000; }, liveBytes: () => live });
    live = 11_999_999;
    garbage.step();
    expect(collections).toBe(0);
    live = 12_000_000;
    garbage.step();
    expect(collections).toBe(1);
    live = 12_000_000;
    garbage.step();
    expect(collections).toBe(1);
    live = 12_500_000;
    garbage.step();
    expect(collections).toBe(2);
  });

  it('does nothing without an exposed gc', () => {
    let reads = 0;
    const garbage = garbageBetweenSteps(1, { gc: undefined, liveBytes: () => ++reads });
    garbage.step();
    garbage.step();
    expect(reads).toBe(0);
  });

  it('under node --expose-gc it collects the garbage of a step (a real V8)', () => {
    const module = fileURLToPath(new URL('../../src/ops/garbage-between-steps.ts', import.meta.url));
    const script = `
      const { garbageBetweenSteps } = await import(${JSON.stringify(module)});
      const { getHeapStatistics } = await import('node:v8');
      const garbage = garbageBetweenSteps(2 * 1024 * 1024);
      let junk = Array.from({ length: 200_000 }, (_, i) => ({ i, s: 'x' + i }));
      junk = null;
      const before = getHeapStatistics().used_heap_size;
      garbage.step();
      console.log(JSON.stringify({ before, after: getHeapStatistics().used_heap_size }));
    `;
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const { before, after } = JSON.parse(r.stdout.trim()) as { before: number; after: number };
    expect(before - after).toBeGreaterThan(4 * 1024 * 1024);
  });
});
