// The console in a real browser (Debian's chromium, headless, driven by playwright-core): load it on a
// recorded log, move the timeline, open an object and read its conditions and their history, open a
// diff. The log deletes a ReferenceGrant at a known event, so each view has something to show.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { start, tmp, waitFor, write } from './cli-helpers.js';
import { DELETED_AT, EVENTS, PROXY_BEHIND_AT, recordedLog } from './grant-log.js';

const CHROMIUM = process.env.TURNPIKE_CHROMIUM ?? '/usr/bin/chromium';

describe('turnpike console in a browser', () => {
  let browser: Browser;
  let page: Page;
  let url = '';
  let server: ReturnType<typeof start>;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `${CHROMIUM} not found: install Debian's chromium package (scripts/test.sh does) or set TURNPIKE_CHROMIUM`,
      );
    const log = write(tmp(), 'events.ndjson', recordedLog());
    server = start('console', log, '--port', '0');
    await waitFor(() => /console on (http:\S+)/.test(server.output()));
    url = /console on (http:\S+)/.exec(server.output())![1]!;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    await page.goto(url);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const row = (key: string) => page.locator(`[data-testid="object-row"][data-key="${key}"]`);
  const text = async (testId: string) => (await page.getByTestId(testId).allTextContents()).join('\n');
  const settle = async (check: () => Promise<boolean>, what: string) => {
    const end = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`the page did not show ${what} in time`);
      await page.waitForTimeout(50);
    }
  };
  const moveTo = async (seq: number) => {
    await page.getByTestId('timeline').fill(String(seq));
    await settle(async () => (await text('current-event')).startsWith(`#${seq} `), `event #${seq} as the current one`);
  };

  it('shows the log, and every object at the last event', async () => {
    // The page starts at the last event.
    await page.getByTestId('summary').waitFor();
    expect(await text('summary')).toBe(`${EVENTS} events, 0 translations from test`);
    await row('HTTPRoute/apps/web').waitFor();
    expect(await row('HTTPRoute/apps/web').textContent()).toContain('ResolvedRefs=False');
  }, 30_000);

  it('moving the timeline shows the statuses of that moment; an object shows its conditions and their history', async () => {
    await moveTo(DELETED_AT - 1);
    await row('HTTPRoute/apps/web').click();
    await page.getByTestId('object-detail').waitFor();
    await settle(
      async () => (await text('condition-row')).includes('ResolvedRefsTrueResolvedRefs'),
      'ResolvedRefs=True',
    );
    await moveTo(DELETED_AT);
    await settle(
      async () => (await text('condition-row')).includes('ResolvedRefsFalseRefNotPermitted'),
      'ResolvedRefs=False',
    );
    expect(await text('condition-row')).toContain('no ReferenceGrant in backends allows HTTPRoute from apps');
    await page.getByTestId('history-change').first().waitFor();
    const history = await text('history-change');
    expect(history).toContain(`#${DELETED_AT}`);
    expect(history).toContain('delete ReferenceGrant backends/let-apps');
    expect(history).toMatch(
      /parent Gateway infra\/gw ResolvedRefs=True\/ResolvedRefs.* → .*parent Gateway infra\/gw ResolvedRefs=False\/RefNotPermitted/,
    );
    expect(await text('explain')).toContain('backendRefs');
  }, 30_000);

  it('a Gateway shows which of its proxies are behind, from the moment the xDS server said so', async () => {
    await moveTo(PROXY_BEHIND_AT);
    await row('Gateway/infra/gw').click();
    await settle(
      async () => (await text('condition-row')).includes('turnpike.dev/ProxiesInSyncFalseBehind'),
      'ProxiesInSync=False',
    );
    expect(await text('condition-row')).toContain(
      '1 of 2 connected proxies have not acknowledged the current configuration: proxy-b',
    );
    await moveTo(PROXY_BEHIND_AT - 1);
    await settle(async () => !(await text('condition-row')).includes('ProxiesInSync'), 'no ProxiesInSync before');
  }, 30_000);

  it('two marked moments open their semantic diff', async () => {
    await moveTo(DELETED_AT - 1);
    await page.getByTestId('mark-a').click();
    await moveTo(DELETED_AT);
    await page.getByTestId('mark-b').click();
    await page.getByTestId('diff-button').click();
    await page.getByTestId('diff').waitFor();
    const diff = await text('diff');
    expect(diff).toContain(`From event #${DELETED_AT - 1} to event #${DELETED_AT}`);
    expect(diff).toContain('ResolvedRefs: True/ResolvedRefs → False/RefNotPermitted');
    expect(diff).toContain('- cluster backends/db/80');
  }, 30_000);
});
