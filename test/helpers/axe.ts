// axe-core in the browser tests: the serious and critical accessibility violations of what a page
// shows now. axe is injected as a script tag, which the dashboard's CSP (script-src 'self') refuses,
// so the page must come from a context opened with bypassCSP (axeContext).
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export function axeContext(browser: Browser, viewport: { width: number; height: number } = { width: 1280, height: 800 }): Promise<BrowserContext> {
  return browser.newContext({ viewport, bypassCSP: true });
}

interface AxeNode {
  target: string[];
}
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: AxeNode[];
}
interface AxeGlobal {
  axe?: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
  document: unknown;
}

/** "rule: help (selectors)" for each serious or critical violation on the page as it is. */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => (globalThis as unknown as AxeGlobal).axe !== undefined))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const g = globalThis as unknown as AxeGlobal;
    const r = await g.axe!.run(g.document, { resultTypes: ['violations'] });
    return r.violations;
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
