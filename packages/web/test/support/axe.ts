/** axe-core in a page, for the suites that check pages for accessibility (issue 29). */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/** Injected as an inline script: the page's context must bypass the CSP (`bypassCSP: true`). */
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** axe-core's serious and critical violations on the page, one line per element. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axeSource });
  const { violations, passes } = await page.evaluate(async () => {
    type Results = { violations: AxeViolation[]; passes: unknown[] };
    const axe = (window as unknown as { axe: { run(): Promise<Results> } }).axe;
    const results = await axe.run();
    return { violations: results.violations, passes: results.passes.length };
  });
  // A page axe checked nothing on would pass for the wrong reason.
  expect(passes).toBeGreaterThan(0);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${v.help} at ${n.target.join(' ')}`));
}
