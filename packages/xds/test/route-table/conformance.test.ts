// Every request of the upstream v1.6.3 conformance tests that exercise a feature we claim, run
// through the route-table check against the Envoy config generated from the tests' own manifests.
// Prints per test: requests checked and passing.
import { afterAll, describe, expect, it } from '@jest/globals';
import { conformanceTables, runConformanceTable, type CaseResult } from './conformance-cases.js';

const report: string[] = [];

describe('route table: upstream conformance requests', () => {
  afterAll(() => {
    process.stdout.write(`route-table conformance (requests passing/checked per test):\n${report.join('\n')}\n`);
  });
  for (const table of conformanceTables()) {
    it(`${table.test}: every request gets what the test expects`, () => {
      const { results, unmodelled, problems } = runConformanceTable(table);
      const passed = results.filter((r) => r.ok).length;
      report.push(
        `  ${table.test}: ${passed}/${results.length}${unmodelled.length ? ` (${unmodelled.length} not modelled)` : ''}`,
      );
      expect(problems).toEqual([]);
      expect(results.filter((r: CaseResult) => !r.ok).map((r) => `${r.name}: ${r.why}`)).toEqual([]);
      expect(results.length).toBeGreaterThan(0);
    });
  }
});
