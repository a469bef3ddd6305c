import { defineConfig } from 'vitest/config';

// The broker cluster test (test/cluster): three RabbitMQ nodes take 30 s to several minutes
// to boot on a loaded 2-core machine, too slow for the suite CI runs twice, so CI runs it
// once as its own step:  npx vitest run --config vitest.cluster.config.ts
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    maxWorkers: 1,
    reporters: ['default'],
    retry: 0,
  },
});
