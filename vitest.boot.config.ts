import { defineConfig } from 'vitest/config';

// The boot tests (test/package/boot-*.test.ts): the amd64 package installed with apt on
// Debian 12 and 13 roots booted with systemd-nspawn -b, and the serial devices opened under
// metergate.service's device policy on a booted Debian 12 (boot-serial-devices). They need the .deb of
// `bash scripts/package`, root, debootstrap and systemd-nspawn, and Debian's mirror, so
// CI runs them as their own step after the package tests:
//   npx vitest run --config vitest.boot.config.ts
export default defineConfig({
  test: {
    include: ['test/package/boot-*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    // One booted Debian at a time on 2 cores.
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default'],
    retry: 0,
  },
});
