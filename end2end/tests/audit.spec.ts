import { readFile } from 'node:fs/promises';
import { expect, test, type Page } from '@playwright/test';
import { ADMIN, STAFF, collectErrors, login, selectByCode, waitHydrated, SAME_ORIGIN } from './helpers';

// Runs against the shared fresh database (demo data, clock 2025-06-15 = B.E. 2568).
// Only this file takes numbers from LCBP3-C3 / RFI คคง. → ผรม.2.

const REST = '/api/v1/document-numbering';

async function visit(page: Page, path: string) {
  await page.goto(path);
  await waitHydrated(page);
}

test('audit search finds the numbers reserved, pages through them and exports them as CSV', async ({ page }) => {
  await login(page, ADMIN);
  const errors = collectErrors(page);

  // twelve numbers over the REST API, with the session cookie of the logged-in admin
  const reserved: string[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await page.request.post(`${REST}/reserve`, {
      headers: SAME_ORIGIN,
      data: { projectCode: 'LCBP3-C3', correspondenceTypeCode: 'RFI', originatorCode: 'คคง.', recipientCode: 'ผรม.2' },
    });
    expect(res.status(), await res.text()).toBe(200);
    reserved.push((await res.json()).documentNumber);
  }
  expect(new Set(reserved).size).toBe(12);
  expect(reserved[0]).toMatch(/^คคง\.-ผรม\.2-\d{4}-2568$/);

  await visit(page, '/audit');
  await expect(page.getByTestId('audit-row').first()).toBeVisible(); // the newest rows, unfiltered
  await page.getByTestId('audit-filter-number').fill('คคง.-ผรม.2-');
  await page.getByTestId('audit-filter-operation').selectOption('RESERVE');
  await selectByCode(page, 'audit-filter-project', 'LCBP3-C3');
  await page.getByTestId('audit-filter-from').fill('2025-06-15');
  await page.getByTestId('audit-filter-to').fill('2025-06-15');
  await page.getByTestId('audit-page-size').selectOption('10');
  await page.getByTestId('audit-search').click();

  const total = page.getByTestId('audit-total');
  const rows = page.getByTestId('audit-row');
  await expect(total).toHaveAttribute('data-total', '12');
  await expect(total).toContainText('12');
  await expect(rows).toHaveCount(10);
  await expect(page.getByTestId('audit-page')).toHaveAttribute('data-page', '1');
  await expect(page.getByTestId('audit-prev')).toBeDisabled();
  const seen = new Set<string>();
  const collect = async () => {
    for (const row of await rows.all()) {
      await expect(row).toHaveAttribute('data-operation', 'RESERVE');
      seen.add((await row.getByTestId('audit-row-number').innerText()).trim());
    }
  };
  await collect();
  // the counter named by its codes and its year, not by ids; what few need is folded away
  await expect(rows.first().getByTestId('audit-row-counter')).toHaveText('ตัวนับ: LCBP3-C3 · RFI · คคง. → ผรม.2 · 2568 (2025)');
  await expect(rows.first().getByTestId('audit-row-template')).toBeHidden();
  await rows.first().getByTestId('audit-row-more').locator('summary').click();
  await expect(rows.first().getByTestId('audit-row-template')).toBeVisible();

  await page.getByTestId('audit-next').click();
  await expect(page.getByTestId('audit-page')).toHaveAttribute('data-page', '2');
  await expect(rows).toHaveCount(2);
  await expect(page.getByTestId('audit-next')).toBeDisabled();
  await collect();
  expect([...seen].sort()).toEqual([...reserved].sort());

  await page.getByTestId('audit-prev').click();
  await expect(page.getByTestId('audit-page')).toHaveAttribute('data-page', '1');
  await expect(rows).toHaveCount(10);

  // the CSV link carries the same filters and downloads every matching row
  const link = page.getByTestId('audit-csv');
  const href = (await link.getAttribute('href'))!;
  expect(href).toContain('format=csv');
  expect(href).toContain('operation=RESERVE');
  expect(href).toContain('projectId=');
  expect(href).toContain('from=2025-06-14T17');
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const csv = (await readFile((await download.path())!, 'utf8')).replace(/^\uFEFF/, '');
  const lines = csv.trim().split(/\r?\n/);
  expect(lines[0]).toContain('document_number');
  expect(lines.length).toBe(13);
  for (const n of reserved) expect(csv).toContain(n);
  // the same link fetched with the page's cookies
  const res = await page.request.get(href);
  expect(res.status()).toBe(200);
  expect(res.headers()['content-type']).toContain('text/csv');
  expect(await res.text()).toContain('document_number');

  // a day with no rows
  await page.getByTestId('audit-filter-from').fill('2025-06-14');
  await page.getByTestId('audit-filter-to').fill('2025-06-14');
  await page.getByTestId('audit-search').click();
  await expect(total).toHaveAttribute('data-total', '0');
  await expect(page.getByTestId('audit-empty')).toBeVisible();
  expect(errors).toEqual([]);
});

test('the error log lists a validation error caused here, and marks it resolved', async ({ page }) => {
  await login(page, ADMIN);
  const unknown = `NO-SUCH-PROJECT-${Date.now()}`;
  const bad = await page.request.post(`${REST}/reserve`, {
    headers: SAME_ORIGIN,
    data: { projectCode: unknown, correspondenceTypeCode: 'LETTER', originatorCode: 'คคง.', recipientCode: 'ผรม.2' },
  });
  // an unknown project is not found (404), and logged as the caller's mistake
  expect(bad.status()).toBe(404);
  // the error log is written off the request path: wait until the server has it
  await expect
    .poll(async () => {
      const r = await page.request.get(`${REST}/logs/errors?errorType=VALIDATION_ERROR&unresolvedOnly=true`);
      return JSON.stringify(await r.json());
    })
    .toContain(unknown);

  await visit(page, '/errors');
  await expect(page.getByTestId('error-unresolved')).toBeChecked();
  await page.getByTestId('error-filter-type').selectOption('VALIDATION_ERROR');
  const row = page.getByTestId('error-row').filter({ hasText: unknown });
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute('data-type', 'VALIDATION_ERROR');
  await expect(row.getByTestId('error-state')).toContainText('ยังไม่แก้ไข');
  for (const r of await page.getByTestId('error-row').all()) await expect(r).toHaveAttribute('data-type', 'VALIDATION_ERROR');

  await row.getByTestId('error-resolve').click();
  // no longer among the unresolved ones
  await expect(row).toHaveCount(0);
  // still listed, as resolved, when all are shown
  await page.getByTestId('error-unresolved').uncheck();
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute('data-resolved', 'true');
  await expect(row.getByTestId('error-state')).toContainText('แก้ไขแล้ว');
  await expect(row.getByTestId('error-resolve')).toHaveCount(0);
});

test('staff see no admin links, get the no-access message on /audit and /errors, and a 403 from the REST log', async ({ page }) => {
  await login(page, STAFF);
  await expect(page.getByTestId('nav-reserve')).toBeVisible();
  for (const link of ['nav-templates', 'nav-tokens', 'nav-audit', 'nav-errors']) {
    await expect(page.getByTestId(link)).toHaveCount(0);
  }
  for (const path of ['/audit', '/errors']) {
    await visit(page, path);
    await expect(page.getByTestId('error')).toHaveText('คุณไม่มีสิทธิ์ใช้หน้านี้');
    await expect(page.getByTestId('audit-search')).toHaveCount(0);
    await expect(page.getByTestId('error-row')).toHaveCount(0);
  }
  const audit = await page.request.get(`${REST}/logs/audit`);
  expect(audit.status()).toBe(403);
  const csv = await page.request.get(`${REST}/logs/audit?format=csv`);
  expect(csv.status()).toBe(403);
  const errs = await page.request.get(`${REST}/logs/errors`);
  expect(errs.status()).toBe(403);
});
