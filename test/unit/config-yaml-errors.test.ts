// A config file that is not valid YAML: each syntax error as one line a person can act on,
// with where it is and what that line says, never the yaml library's first line ending in
// "at line L, column C:" (whose excerpt followed on lines the loader dropped). The same for
// the metergate.yaml firstboot takes from the boot partition (its metergate-error.txt).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { planFirstBoot } from '../../src/firstboot/plan.js';

const dir = mkdtempSync(join(tmpdir(), 'mg-yaml-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The problems loadConfig reports for a file holding `text`. */
function problemsOf(text: string): readonly string[] {
  const file = join(dir, 'config.yaml');
  writeFileSync(file, text);
  try {
    loadConfig(file, {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('loaded');
}

const ORG = 'organization_id: 3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11\n';

describe('YAML syntax errors in a config file', () => {
  it('name the line and column and quote the line, with no dangling colon', () => {
    expect(problemsOf(`${ORG}mqtt:\n  url: mqtts://broker:8883\n username: gw\n`)).toEqual([
      '(yaml) line 4, column 1: All mapping items must start at the same column (line 4 reads " username: gw")',
    ]);
    expect(problemsOf(`${ORG}poll: interval_ms: 5000\n`)).toEqual([
      '(yaml) line 2, column 7: Nested mappings are not allowed in compact mappings (line 2 reads "poll: interval_ms: 5000")',
    ]);
    // A tab shows as \t: the reason is visible in the quote.
    expect(problemsOf(`${ORG}poll:\n\tinterval_ms: 5000\n`)[0]).toBe('(yaml) line 3, column 1: Tabs are not allowed as indentation (line 3 reads "\\tinterval_ms: 5000")');
  });

  it('every error of the file, each on its own line', () => {
    const problems = problemsOf(`${ORG}a: 1\na: 2\nb: "open\n`);
    expect(problems.length).toBeGreaterThanOrEqual(2);
    for (const p of problems) {
      expect(p).toMatch(/^\(yaml\) line \d+, column \d+: \S/);
      expect(p).not.toMatch(/:$|\n|at line \d+, column \d+/);
    }
    expect(problems[0]).toBe('(yaml) line 3, column 1: Map keys must be unique (line 3 reads "a: 2")');
  });

  it('the same lines for firstboot\'s metergate.yaml', () => {
    const plan = planFirstBoot(`${ORG}mqtt:\n  url: mqtts://broker:8883\n username: gw\n`, new Set(), () => undefined, '/boot/firmware');
    expect(plan.syntaxProblems).toEqual(['(yaml) line 4, column 1: All mapping items must start at the same column (line 4 reads " username: gw")']);
  });
});
