/**
 * Waits for a state, not for a time: polls `check` until it holds, or fails naming `what`.
 * Timeouts are generous on purpose (a loaded 2-core CI machine); a passing check returns at once.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000, pollMs = 25): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
