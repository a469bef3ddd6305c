import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real brokers and ptys; two cores, so keep the fan-out small.
    maxWorkers: 2,
    reporters: ['default'],
    // On CI (a 2-core machine, suites running side by side) a test that fails is run once
    // more before the run fails: the peers are real processes (mosquitto, socat, simulators)
    // whose start-up can be starved. A retried test still shows in the report; locally
    // nothing is retried, so a flaky test is seen where it can be fixed.
    retry: process.env.CI ? 1 : 0,
  },
});
