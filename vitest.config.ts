import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The package tests need built .deb files: their own CI step (vitest.package.config.ts).
    // The broker cluster test is its own CI step too, run once (vitest.cluster.config.ts).
    exclude: [...configDefaults.exclude, 'test/package/**', 'test/cluster/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real brokers and ptys; two cores, so keep the fan-out small.
    maxWorkers: 2,
    reporters: ['default'],
    // Never retried, on CI neither: a test that passes only the second time is a flaky
    // test, and a retry would hide it (fix the test instead).
    retry: 0,
  },
});
