import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { ADMIN, PADMIN, collectErrors, login, selectByCode, waitHydrated, SAME_ORIGIN } from './helpers';

// Runs against the shared fresh database (demo data, clock 2025-06-15 = B.E. 2568).
// Only this file takes numbers from LCBP3-C4 / MEMO and LCBP3-C4 / RFA (resets.spec.ts uses LCBP3-C4 / LETTER
// and NOTICE). The project admin `padmin` administers LCBP3-C4 only (scripts/e2e.sh).

const REST = '/api/v1/document-numbering';

async function visit(page: Page, path: string) {
  await page.goto(path);
  await waitHydrated(page);
}

async function reserve(request: APIRequestContext, body: Record<string, string>) {
  const res = await request.post(`${REST}/reserve`, { headers: SAME_ORIGIN, data: { projectCode: 'LCBP3-C4', ...body } });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as { token: string; documentNumber: string; sequence: number };
}

async function confirm(request: APIRequestContext, token: string, documentId: string) {
  const res = await request.post(`${REST}/confirm`, { headers: SAME_ORIGIN, data: { token, documentId } });
  expect(res.status(), await res.text()).toBe(200);
}

/** Opens the one counter the filters find. */
async function openCounter(page: Page, project: string, type: string, parts?: string) {
  await visit(page, '/counters');
  await selectByCode(page, 'counter-filter-project', project);
  await selectByCode(page, 'counter-filter-type', type);
  await page.getByTestId('counter-filter-year').fill('2568');
  const row = parts ? page.locator(`[data-testid="counter-row"][data-parts="${parts}"]`) : page.getByTestId('counter-row');
  await expect(row).toHaveCount(1);
  await row.getByTestId('counter-open').click();
  await expect(page.getByTestId('counter-detail')).toBeVisible();
  return row;
}

test('a project admin browses the counters of their project: last number, utilization, every number with its status', async ({ page }) => {
  await login(page, PADMIN);
  const memo = { correspondenceTypeCode: 'MEMO', originatorCode: 'คคง.', recipientCode: 'ผรม.1' };
  const n1 = await reserve(page.request, memo);
  const n2 = await reserve(page.request, memo);
  const n3 = await reserve(page.request, memo);
  const n4 = await reserve(page.request, memo);
  expect([n1, n2, n3, n4].map((n) => n.documentNumber)).toEqual([
    'คคง.-ผรม.1-0001-2568',
    'คคง.-ผรม.1-0002-2568',
    'คคง.-ผรม.1-0003-2568',
    'คคง.-ผรม.1-0004-2568',
  ]);
  await confirm(page.request, n1.token, 'DOC-E2E-CTR-0001');
  const cancel = await page.request.post(`${REST}/cancel`, { headers: SAME_ORIGIN, data: { token: n2.token, reason: 'ไม่ได้ใช้' } });
  expect(cancel.status()).toBe(200);
  await confirm(page.request, n4.token, 'DOC-E2E-CTR-0004');

  await visit(page, '/counters');
  await expect(page.getByTestId('nav-counters')).toBeVisible();
  await expect(page.getByTestId('nav-resets')).toHaveCount(0);
  // only the project they administer is offered, and only its counters are listed
  const projectOptions = page.getByTestId('counter-filter-project').locator('option[data-code]');
  await expect(projectOptions).toHaveCount(1);
  await expect(projectOptions).toHaveAttribute('data-code', 'LCBP3-C4');
  await expect(page.getByTestId('counter-row').first()).toBeVisible();
  for (const r of await page.getByTestId('counter-row').all()) await expect(r).toHaveAttribute('data-project', 'LCBP3-C4');

  const row = await openCounter(page, 'LCBP3-C4', 'MEMO');
  await expect(row).toHaveAttribute('data-period', 'YEAR_2025');
  await expect(row).toHaveAttribute('data-parts', 'คคง. → ผรม.1');
  await expect(row.getByTestId('counter-last')).toHaveText('4');
  await expect(row.getByTestId('counter-utilization')).toContainText('0.04%'); // 4 of 9,999
  await expect(page.getByTestId('counter-detail')).toHaveAttribute('data-last', '4');

  const numbers = page.getByTestId('number-row');
  await expect(numbers).toHaveCount(4);
  const seen = [];
  for (const r of await numbers.all()) {
    seen.push([await r.getAttribute('data-sequence'), await r.getAttribute('data-number'), await r.getAttribute('data-status')]);
  }
  expect(seen).toEqual([
    ['1', 'คคง.-ผรม.1-0001-2568', 'CONFIRMED'],
    ['2', 'คคง.-ผรม.1-0002-2568', 'CANCELLED'],
    ['3', 'คคง.-ผรม.1-0003-2568', 'RESERVED'],
    ['4', 'คคง.-ผรม.1-0004-2568', 'CONFIRMED'],
  ]);
  await expect(numbers.nth(0).getByTestId('number-status')).toContainText('ยืนยันแล้ว');
  await expect(numbers.nth(1).getByTestId('number-status')).toContainText('ยกเลิก');
  await expect(numbers.nth(1)).toContainText('ไม่ได้ใช้');
  await expect(numbers.nth(0)).toContainText('DOC-E2E-CTR-0001');
  // each number links its receipt's QR code and printable stamp, drawn by the service
  const qr = await page.request.get((await numbers.nth(0).getByTestId('number-qr').getAttribute('href'))!);
  expect(qr.status()).toBe(200);
  expect(qr.headers()['content-type']).toContain('image/svg+xml');
  const stamp = await page.request.get((await numbers.nth(3).getByTestId('number-stamp').getAttribute('href'))!);
  expect(stamp.status()).toBe(200);
  expect(await stamp.text()).toContain('คคง.-ผรม.1-0004-2568');
  await expect(page.getByTestId('gaps-none')).toBeVisible();
  // a project admin browses; the super-admin operations are not offered. The buttons are the server's
  // availableActions for this caller: revising is anyone's who may take numbers in the project, voiding a super
  // admin's, and a held or cancelled number offers nothing here (confirm and cancel need its token)
  await expect(page.getByTestId('superadmin-ops')).toHaveCount(0);
  await expect(page.getByTestId('number-void')).toHaveCount(0);
  await expect(page.getByTestId('number-revise')).toHaveCount(2);
  await expect(numbers.nth(0).getByTestId('number-revise')).toBeVisible();
  await expect(numbers.nth(3).getByTestId('number-revise')).toBeVisible();

  // other projects are refused by the server, whatever the page shows
  const projects = await (await page.request.get('/api/v1/reference/projects')).json();
  const other = projects.find((p: { code: string }) => p.code === 'LCBP3');
  const res = await page.request.get(`${REST}/counters?projectId=${other.id}`);
  expect(res.status()).toBe(403);
  // and the reset requests page is for super admins
  await visit(page, '/resets');
  await expect(page.getByTestId('error')).toHaveText('คุณไม่มีสิทธิ์ใช้หน้านี้');
  await expect(page.getByTestId('no-access-role')).toContainText('SUPER_ADMIN');
  await expect(page.getByTestId('reset-table')).toHaveCount(0);
});

test('a super admin revises, voids and replaces, registers a legacy number and moves a counter forward, from the counter page', async ({ page }) => {
  await login(page, ADMIN);
  const rfa = { correspondenceTypeCode: 'RFA', disciplineCode: 'TER', rfaTypeCode: 'RPT' };
  const a = await reserve(page.request, rfa);
  const b = await reserve(page.request, rfa);
  expect(a.documentNumber).toBe('LCBP3-C4-RFA-TER-RPT-0001-A');
  expect(b.documentNumber).toBe('LCBP3-C4-RFA-TER-RPT-0002-A');
  await confirm(page.request, a.token, 'DOC-E2E-RFA-0001');
  await confirm(page.request, b.token, 'DOC-E2E-RFA-0002');

  // RFA counters never restart (no year in the template): period NONE
  await visit(page, '/counters');
  await selectByCode(page, 'counter-filter-project', 'LCBP3-C4');
  await selectByCode(page, 'counter-filter-type', 'RFA');
  const row = page.getByTestId('counter-row');
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute('data-period', 'NONE');
  // shown in words, not as the stored key
  await expect(row.getByTestId('counter-period')).toHaveText('ไม่เริ่มนับใหม่');
  await expect(row).toHaveAttribute('data-parts', 'RPT · TER');
  await row.getByTestId('counter-open').click();
  const detail = page.getByTestId('counter-detail');
  await expect(detail).toHaveAttribute('data-last', '2');
  await expect(page.getByTestId('superadmin-ops')).toBeVisible();
  const numbers = page.getByTestId('number-row');
  const bySeq = (seq: number, rev = 'A') => page.locator(`[data-testid="number-row"][data-sequence="${seq}"][data-revision="${rev}"]`);
  await expect(numbers).toHaveCount(2);

  // revise: the next REV of sequence 1, no counter consumed
  await bySeq(1).getByTestId('number-revise').click();
  const result = page.getByTestId('op-result');
  await expect(result).toHaveAttribute('data-kind', 'revise');
  await expect(result).toHaveAttribute('data-number', 'LCBP3-C4-RFA-TER-RPT-0001-B');
  await expect(bySeq(1, 'B')).toHaveAttribute('data-status', 'CONFIRMED');
  await expect(bySeq(1, 'B')).toContainText('DOC-E2E-RFA-0001');
  await expect(bySeq(1, 'A')).toHaveAttribute('data-status', 'CONFIRMED');
  await expect(detail).toHaveAttribute('data-last', '2');
  await expect(row.getByTestId('counter-last')).toHaveText('2');

  // void-and-replace sequence 2: it becomes VOID with the reason, its replacement takes sequence 3
  await bySeq(2).getByTestId('number-void').click();
  await page.getByTestId('void-reason').fill('ออกเลขผิดเอกสาร');
  await page.getByTestId('void-confirm').click();
  await expect(result).toHaveAttribute('data-kind', 'void');
  await expect(result).toHaveAttribute('data-number', 'LCBP3-C4-RFA-TER-RPT-0003-A');
  await expect(bySeq(2)).toHaveAttribute('data-status', 'VOID');
  await expect(bySeq(2)).toContainText('ออกเลขผิดเอกสาร');
  await expect(bySeq(2).getByTestId('number-void')).toHaveCount(0);
  await expect(bySeq(3)).toHaveAttribute('data-status', 'CONFIRMED');
  await expect(bySeq(3)).toContainText('DOC-E2E-RFA-0002'); // the original's document
  await expect(detail).toHaveAttribute('data-last', '3');

  // void without a replacement, sequence 3: VOID with its reason, nothing issued in its place
  await bySeq(3).getByTestId('number-void').click();
  await page.getByTestId('void-reason').fill('เอกสารถูกยกเลิกทั้งฉบับ');
  await page.getByTestId('void-only-confirm').click();
  await expect(result).toHaveAttribute('data-kind', 'void-only');
  await expect(result).toHaveAttribute('data-number', 'LCBP3-C4-RFA-TER-RPT-0003-A');
  await expect(bySeq(3)).toHaveAttribute('data-status', 'VOID');
  await expect(bySeq(3)).toContainText('เอกสารถูกยกเลิกทั้งฉบับ');
  await expect(detail).toHaveAttribute('data-last', '3');

  // manual override: a hand-typed legacy number, read with the template; the sequences passed over are audited
  await page.getByTestId('override-number').fill('LCBP3-C4-RFA-TER-RPT-0010-A');
  await page.getByTestId('override-document-id').fill('LEGACY-0010');
  await page.getByTestId('override-reason').fill('นำเข้าเลขที่จากระบบเดิม');
  await page.getByTestId('override-register').click();
  await expect(result).toHaveAttribute('data-kind', 'register');
  await expect(result).toHaveAttribute('data-number', 'LCBP3-C4-RFA-TER-RPT-0010-A');
  await expect(bySeq(10)).toHaveAttribute('data-status', 'CONFIRMED');
  await expect(bySeq(10)).toContainText('LEGACY-0010');
  await expect(detail).toHaveAttribute('data-last', '10');
  const gaps = page.getByTestId('gap-row');
  await expect(gaps).toHaveCount(6); // 4…9
  for (const g of await gaps.all()) {
    await expect(g).toHaveAttribute('data-operation', 'MANUAL_OVERRIDE');
    await expect(g).toHaveAttribute('data-status', 'SKIPPED');
  }
  expect(await gaps.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-sequence')))).toEqual(['4', '5', '6', '7', '8', '9']);
  // a number that does not read as the template is refused
  await page.getByTestId('override-number').fill('LCBP3-C4-RFA-TER-0011-A');
  await page.getByTestId('override-reason').fill('เลขผิดรูปแบบ');
  await page.getByTestId('override-register').click();
  await expect(page.getByTestId('error')).toContainText('ไม่ตรงกับรูปแบบ');
  await expect(detail).toHaveAttribute('data-last', '10');

  // set the counter: below the highest issued is refused (lowering is a reset), forward is done and audited
  await page.getByTestId('override-value').fill('9');
  await page.getByTestId('override-value-reason').fill('ทดสอบค่าต่ำกว่า');
  await page.getByTestId('override-set').click();
  await expect(page.getByTestId('error')).toContainText('ต่ำกว่าเลขที่ออกไปแล้ว (10)');
  await expect(detail).toHaveAttribute('data-last', '10');
  await page.getByTestId('override-value').fill('15');
  await page.getByTestId('override-value-reason').fill('สำรองเลขสำหรับเอกสารกระดาษ');
  await page.getByTestId('override-set').click();
  await expect(result).toHaveAttribute('data-kind', 'set');
  await expect(result).toContainText('10 → 15');
  await expect(detail).toHaveAttribute('data-last', '15');
  await expect(row.getByTestId('counter-last')).toHaveText('15');
  await expect(gaps).toHaveCount(11); // 4…9 and 11…15
  await expect(page.locator('[data-testid="gap-row"][data-explained="false"]')).toHaveCount(0);

  // the next number continues after the override
  const next = await reserve(page.request, rfa);
  expect(next.documentNumber).toBe('LCBP3-C4-RFA-TER-RPT-0016-A');
});

test('the counter and reset pages hydrate without console errors for a super admin', async ({ page }) => {
  await login(page, ADMIN);
  const errors = collectErrors(page);
  await visit(page, '/counters');
  await expect(page.getByTestId('nav-counters')).toBeVisible();
  await expect(page.getByTestId('nav-resets')).toBeVisible();
  await expect(page.getByTestId('counter-row').first()).toBeVisible();
  await page.getByTestId('counter-open').first().click();
  await expect(page.getByTestId('number-row').first()).toBeVisible();
  await expect(page.getByTestId('superadmin-ops')).toBeVisible();
  await page.getByTestId('nav-resets').click();
  await expect(page).toHaveURL(/\/resets$/);
  await expect(page.getByTestId('reset-filter-state')).toBeVisible();
  await visit(page, '/resets');
  await expect(page.getByTestId('reset-filter-state')).toBeVisible();
  // the English switch reaches the new pages
  await page.getByTestId('lang-switch').click();
  await expect(page.locator('h1')).toHaveText('Counter reset requests');
  await page.getByTestId('lang-switch').click();
  await expect(page.locator('h1')).toHaveText('คำขอรีเซ็ตตัวนับ');
  expect(errors).toEqual([]);
});
