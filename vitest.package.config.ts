import { defineConfig } from 'vitest/config';

// The package tests (test/package): they need the .deb files of `bash scripts/package --all`
// and run the arm packages under qemu, so CI runs them as their own step after the suite:
//   bash scripts/package --all && npx vitest run --config vitest.package.config.ts
export default defineConfig({
  test: {
    include: ['test/package/**/*.test.ts'],
    // The booted-Debian tests are their own step (vitest.boot.config.ts).
    exclude: ['test/package/boot-*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Each arm file runs Node under qemu: one file at a time keeps timings sane on 2 cores.
    maxWorkers: 1,
    reporters: ['default'],
    retry: 0,
  },
});
