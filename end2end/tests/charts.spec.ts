import { expect, test } from '@playwright/test';
import { ADMIN, SAME_ORIGIN, STAFF, login, selectByCode, waitHydrated, openMore } from './helpers';

// /charts: numbers issued per Bangkok day and type, and the counters' utilization, drawn as SVG
// with a table beside each. Only this file takes numbers from LCBP3-C2 / OTHER คคง. → ผรม.1.

const REST = '/api/v1/document-numbering';
const TODAY = '2025-06-15'; // the clock of the browser tests

test('a bar of today shows what the API counts for that day and type', async ({ page }) => {
  await login(page, ADMIN);
  const number = { projectCode: 'LCBP3-C2', correspondenceTypeCode: 'OTHER', originatorCode: 'คคง.', recipientCode: 'ผรม.1' };
  for (let i = 0; i < 2; i++) {
    const r = await page.request.post(`${REST}/reserve`, { headers: SAME_ORIGIN, data: number });
    expect(r.status(), await r.text()).toBe(200);
  }

  await page.goto('/charts');
  await waitHydrated(page);
  // only LCBP3-C2: the other files' numbers of today do not move this bar between reading it and asking the API
  await selectByCode(page, 'chart-filter-project', 'LCBP3-C2');
  const chart = page.getByTestId('daily-chart');
  await expect(chart).toHaveAttribute('role', 'img');
  await expect(chart.locator('title').first()).not.toBeEmpty();
  const bar = chart.locator(`rect[data-date="${TODAY}"][data-type="OTHER"]`);
  await expect(bar).toHaveCount(1);
  const shown = Number(await bar.getAttribute('data-value'));
  expect(shown).toBeGreaterThanOrEqual(2);
  await expect(bar.locator('title')).toHaveText(`15 มิ.ย. 2568 · OTHER: ${shown}`);

  // the API with the page's session, for the same project
  const projects = await (await page.request.get('/api/v1/reference/projects')).json();
  const c2 = projects.find((p: { code: string }) => p.code === 'LCBP3-C2');
  const api = await page.request.get(`${REST}/stats/daily?days=90&projectId=${c2.id}`);
  expect(api.status(), await api.text()).toBe(200);
  const daily = await api.json();
  expect(daily.days).toHaveLength(90);
  expect(daily.days[89]).toBe(TODAY);
  const other = daily.types.find((t: { correspondenceTypeCode: string }) => t.correspondenceTypeCode === 'OTHER');
  expect(other.counts[89]).toBe(shown);

  // the table beside it holds the same value, under its day and type
  await page.locator('details.chart-data summary').first().click();
  const table = page.getByTestId('daily-table');
  const column = (await table.locator('thead th').allInnerTexts()).indexOf('OTHER');
  expect(column).toBeGreaterThan(0);
  await expect(table.locator(`tr[data-date="${TODAY}"] > *`).nth(column)).toHaveText(String(shown));

  // its counter is among the fullest of LCBP3-C2, drawn up to today as the API has it, the 95 % line marked
  const usage = page.getByTestId('usage-chart');
  await expect(usage.getByTestId('chart-limit')).toHaveCount(1);
  const history = await (await page.request.get(`${REST}/stats/utilization?projectId=${c2.id}`)).json();
  const series = history.counters.find((s: { counter: { correspondenceTypeCode: string } }) => s.counter.correspondenceTypeCode === 'OTHER');
  expect(series.lastSequences[89]).toBeGreaterThanOrEqual(2);
  const point = usage.locator(`circle[data-date="${TODAY}"][data-counter="${series.counter.id}"]`);
  await expect(point).toHaveAttribute('data-sequence', String(series.lastSequences[89]));

  // in English the days read in A.D.
  await page.getByTestId('lang-switch').click();
  await expect(bar.locator('title')).toHaveText(`15 Jun 2025 · OTHER: ${shown}`);
});

test('the charts fit a phone and staff are refused', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, ADMIN);
  await page.goto('/charts');
  await waitHydrated(page);
  await expect(page.getByTestId('daily-chart')).toBeVisible();
  const svg = await page.getByTestId('daily-chart').boundingBox();
  expect(svg!.width).toBeLessThanOrEqual(390);
  const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll).toBeLessThanOrEqual(width);
  // the link is in the phone's menu
  await page.getByTestId('menu-toggle').click();
  await openMore(page);
  await expect(page.getByTestId('nav-charts')).toBeVisible();

  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(/\/login$/);
  await login(page, STAFF);
  await page.goto('/charts');
  await waitHydrated(page);
  await expect(page.getByTestId('no-access')).toBeVisible();
  const r = await page.request.get(`${REST}/stats/daily`);
  expect(r.status()).toBe(403);
  expect((await r.json()).message).toMatch(/[\u0E00-\u0E7F]/);
});
