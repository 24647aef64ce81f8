import { expect, test } from '@playwright/test';
import { ADMIN, SAME_ORIGIN, STAFF, login, waitHydrated, loginLive } from './helpers';

// What a person sees at a desk and on a phone: dates under a chart's axis never overlap, the header stays one line at
// 1366 px with the rarely used admin pages under "more", the counter browser is a column of cards on a phone.
// SCREENSHOTS=dir saves each page as the pictures in end2end/screenshots. Only this file takes numbers from
// LCBP3 / LETTER / ผรม.2 → กทท.

const shots = process.env.SCREENSHOTS;

test.describe('at a desk, 1366 × 768', () => {
  test.use({ viewport: { width: 1366, height: 768 } });

  test('the dates under the charts do not overlap and the header is one line', async ({ page }) => {
    await login(page, ADMIN);
    await page.goto('/charts');
    await waitHydrated(page);
    await expect(page.getByTestId('daily-chart')).toBeVisible();
    for (const id of ['daily-chart', 'usage-chart']) {
      const chart = page.getByTestId(id);
      if ((await chart.count()) === 0) continue;
      // the dates are the ticks of the bottom row (the count ticks stand at the left, one under another)
      const boxes = await chart.locator('text.tick').evaluateAll((texts) =>
        texts
          .map((t) => (t as SVGTextElement).getBoundingClientRect())
          .map((r) => ({ left: r.left, right: r.right, top: r.top })),
      );
      const bottom = Math.max(...boxes.map((b) => b.top));
      const dates = boxes.filter((b) => Math.abs(b.top - bottom) < 1).sort((a, b) => a.left - b.left);
      expect(dates.length, id).toBeGreaterThan(1);
      for (let i = 1; i < dates.length; i++) {
        expect(dates[i].left, `${id}: date ${i} starts after date ${i - 1} ends`).toBeGreaterThan(dates[i - 1].right);
      }
    }
    const bar = await page.locator('header.topbar').boundingBox();
    expect(bar!.height, 'one line').toBeLessThan(64);
    await expect(page.getByTestId('nav-users')).toBeHidden();
    await page.getByTestId('nav-more').locator('summary').click();
    await expect(page.getByTestId('nav-users')).toBeVisible();
    if (shots) await page.screenshot({ path: `${shots}/1366-charts.png`, fullPage: true });
    // a page chosen from "more" closes it
    await page.getByTestId('nav-logins').click();
    await expect(page).toHaveURL(/\/logins$/);
    await expect(page.getByTestId('nav-users')).toBeHidden();
  });
});

test.describe('on a phone, 390 × 844', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the counter browser is a column of cards, nothing scrolls sideways', async ({ page }) => {
    await login(page, ADMIN);
    const number = { projectCode: 'LCBP3', correspondenceTypeCode: 'LETTER', originatorCode: 'ผรม.2', recipientCode: 'กทท.' };
    const r = await page.request.post('/api/v1/document-numbering/reserve', { headers: SAME_ORIGIN, data: number });
    expect(r.status(), await r.text()).toBe(200);
    await page.goto('/counters');
    await waitHydrated(page);
    const row = page.getByTestId('counter-row').first();
    await expect(row).toBeVisible();
    expect(await row.evaluate((el) => getComputedStyle(el).display)).toBe('block');
    // each cell a line of the card, with its column's name
    const project = row.locator('td').nth(1);
    expect(await project.evaluate((el) => getComputedStyle(el, '::before').content)).toBe('"โครงการ"');
    const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    expect(scroll).toBeLessThanOrEqual(width);
    const table = await page.getByTestId('counter-table').evaluate((el) => [el.scrollWidth, el.clientWidth]);
    expect(table[0]).toBeLessThanOrEqual(table[1] + 1);
    if (shots) await page.screenshot({ path: `${shots}/390-counters.png` });
  });

  test('the reserve page', async ({ page }) => {
    test.skip(!shots, 'a picture only');
    await loginLive(page, STAFF);
    await page.screenshot({ path: `${shots}/390-reserve.png`, fullPage: true });
  });
});
