import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real brokers and ptys; two cores, so keep the fan-out small.
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
