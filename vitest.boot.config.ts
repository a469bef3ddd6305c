import { defineConfig } from 'vitest/config';

// The boot tests (test/package/boot-*.test.ts): the amd64 package installed with apt on
// Debian 12 and 13 roots booted with systemd-nspawn -b. They need the .deb of
// `bash scripts/package`, root, debootstrap and systemd-nspawn, and Debian's mirror, so
// CI runs them as their own step after the package tests:
//   npx vitest run --config vitest.boot.config.ts
export default defineConfig({
  test: {
    // Debian 12 joins once the package installs there with Debian 12's own sources (issue 21:
    // today it depends on nodejs >= 20, and bookworm has 18).
    include: ['test/package/boot-trixie.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    // One booted Debian at a time on 2 cores.
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default'],
    retry: 0,
  },
});
