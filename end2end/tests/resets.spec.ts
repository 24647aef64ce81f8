import { expect, request as apiRequest, test, type APIRequestContext, type Browser, type Page } from '@playwright/test';
import { ADMIN, ADMIN2, STAFF, login, selectByCode, waitHydrated, SAME_ORIGIN } from './helpers';

// Runs against the shared fresh database (demo data, clock 2025-06-15 = B.E. 2568).
// Only this file takes numbers from LCBP3-C4 / LETTER and LCBP3-C4 / NOTICE.

const REST = '/api/v1/document-numbering';
const LETTER = { projectCode: 'LCBP3-C4', correspondenceTypeCode: 'LETTER', originatorCode: 'คคง.', recipientCode: 'ผรม.2' };
/** 20 Thai characters (Unicode characters, not bytes: 60 bytes in UTF-8), and the same less its last one. */
const REASON_20 = 'ขอรีเซ็ตตัวนับปีใหม่';
const REASON_19 = 'ขอรีเซ็ตตัวนับปีใหม';

async function visit(page: Page, path: string) {
  await page.goto(path);
  await waitHydrated(page);
}

async function reserve(request: APIRequestContext, body: Record<string, string> = LETTER) {
  const res = await request.post(`${REST}/reserve`, { headers: SAME_ORIGIN, data: body });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as { token: string; documentNumber: string };
}

/** A logged-in page of its own (its own cookies) for a second person. */
async function pageOf(browser: Browser, baseURL: string | undefined, who: { user: string; password: string }) {
  const context = await browser.newContext({ baseURL, locale: 'th-TH' });
  const page = await context.newPage();
  await login(page, who);
  return page;
}

async function openLetterCounter(page: Page) {
  await visit(page, '/counters');
  await selectByCode(page, 'counter-filter-project', 'LCBP3-C4');
  await selectByCode(page, 'counter-filter-type', 'LETTER');
  const row = page.locator('[data-testid="counter-row"][data-parts="คคง. → ผรม.2"]');
  await expect(row).toHaveCount(1);
  await row.getByTestId('counter-open').click();
  await expect(page.getByTestId('counter-detail')).toBeVisible();
  return row;
}

test('two super admins reset a counter: the requester cannot approve, a 19-character reason is refused, another super admin approves', async ({ page, browser, baseURL }) => {
  expect(REASON_20.length).toBe(20);
  expect(REASON_19.length).toBe(19);
  await login(page, ADMIN);
  const first = await reserve(page.request);
  expect(first.documentNumber).toBe('คคง.-ผรม.2-0001-2568');
  const confirmed = await page.request.post(`${REST}/confirm`, { headers: SAME_ORIGIN, data: { token: first.token, documentId: 'DOC-E2E-RESET-1' } });
  expect(confirmed.status()).toBe(200);
  expect((await reserve(page.request)).documentNumber).toBe('คคง.-ผรม.2-0002-2568');
  expect((await reserve(page.request)).documentNumber).toBe('คคง.-ผรม.2-0003-2568');

  // the first super admin asks, from the counter page, for a restart at 1 (the highest confirmed)
  const row = await openLetterCounter(page);
  const counterId = await row.getAttribute('data-counter-id');
  await expect(page.getByTestId('counter-detail')).toHaveAttribute('data-last', '3');
  await page.getByTestId('reset-value').fill('1');
  await page.getByTestId('reset-reason').fill(REASON_19);
  await expect(page.getByTestId('reset-reason-count')).toHaveAttribute('data-count', '19');
  await page.getByTestId('reset-request').click();
  await expect(page.getByTestId('error')).toContainText('เหตุผลต้องมีอย่างน้อย 20 ตัวอักษร (มี 19 ตัวอักษร)');
  await expect(page.getByTestId('op-result')).toHaveCount(0);
  const none = await page.request.get(`/api/v1/workflow/reset-requests?counterId=${counterId}`);
  expect(await none.json()).toEqual([]);

  await page.getByTestId('reset-reason').fill(REASON_20);
  await expect(page.getByTestId('reset-reason-count')).toHaveAttribute('data-count', '20');
  await page.getByTestId('reset-request').click();
  const result = page.getByTestId('op-result');
  await expect(result).toHaveAttribute('data-kind', 'reset');
  await expect(result).toContainText('PENDING');
  await expect(page.getByTestId('error')).toHaveCount(0);
  await expect(page.getByTestId('counter-detail')).toHaveAttribute('data-last', '3'); // nothing happens before approval

  // on the requests page the requester gets no button (availableActions is empty for them) …
  await result.getByTestId('op-result-resets').click();
  await waitHydrated(page);
  const mine = page.locator(`[data-testid="reset-row"][data-counter-id="${counterId}"]`);
  await expect(mine).toHaveCount(1);
  await expect(mine).toHaveAttribute('data-state', 'PENDING');
  await expect(mine).toHaveAttribute('data-actions', '');
  await expect(mine.getByTestId('reset-values')).toHaveText('3 → 1');
  await expect(mine.getByTestId('reset-reason-text')).toHaveText(REASON_20);
  await expect(mine.getByTestId('reset-waiting')).toBeVisible();
  await expect(mine.getByTestId('reset-action-APPROVE')).toHaveCount(0);
  const publicId = (await mine.getAttribute('data-public-id'))!;
  // … and the server refuses their approval anyway
  const own = await page.request.post(`/api/v1/workflow/${publicId}/actions/APPROVE`, { headers: SAME_ORIGIN, data: {} });
  expect(own.status()).toBe(403);
  const still = await (await page.request.get(`/api/v1/workflow/${publicId}`)).json();
  expect(still.workflow.currentState).toBe('PENDING');

  // a different super admin sees APPROVE and REJECT, and approves
  const other = await pageOf(browser, baseURL, ADMIN2);
  await expect(other.getByTestId('nav-resets')).toBeVisible();
  await visit(other, '/resets');
  const theirs = other.locator(`[data-testid="reset-row"][data-counter-id="${counterId}"]`);
  await expect(theirs).toHaveAttribute('data-actions', 'APPROVE,REJECT');
  await theirs.getByTestId('reset-comment').fill('ตรวจสอบแล้ว อนุมัติ');
  await theirs.getByTestId('reset-action-APPROVE').click();
  await expect(other.getByTestId('reset-done')).toHaveAttribute('data-state', 'APPROVED');
  await expect(theirs).toHaveAttribute('data-state', 'APPROVED');
  await expect(theirs).toHaveAttribute('data-actions', '');
  await expect(theirs.getByTestId('reset-action-APPROVE')).toHaveCount(0);
  expect(await theirs.getByTestId('reset-event').evaluateAll((es) => es.map((e) => e.getAttribute('data-action')))).toEqual(['REQUEST', 'APPROVE']);
  await expect(theirs).toContainText('ตรวจสอบแล้ว อนุมัติ');

  // the counter restarted at 1: 0002 and 0003 (never confirmed) were released, 0001 stays
  await openLetterCounter(other);
  await expect(other.getByTestId('counter-detail')).toHaveAttribute('data-last', '1');
  const numbers = other.getByTestId('number-row');
  await expect(numbers).toHaveCount(1);
  await expect(numbers).toHaveAttribute('data-number', 'คคง.-ผรม.2-0001-2568');
  await expect(numbers).toHaveAttribute('data-status', 'CONFIRMED');
  const released = other.getByTestId('released-row');
  expect(await released.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-number')))).toEqual([
    'คคง.-ผรม.2-0002-2568',
    'คคง.-ผรม.2-0003-2568',
  ]);
  // and the next number is 0002 again
  expect((await reserve(page.request)).documentNumber).toBe('คคง.-ผรม.2-0002-2568');

  // every step is in the audit log
  for (const op of ['RESET_REQUEST', 'RESET_APPROVE', 'RESET_EXECUTE']) {
    const audit = await (await page.request.get(`${REST}/logs/audit?operation=${op}`)).json();
    expect(audit.rows.some((r: { counterId: number }) => String(r.counterId) === counterId), op).toBe(true);
  }

  // a second request, rejected by the other super admin: the counter stays where it is
  const again = await page.request.post(`${REST}/counters/${counterId}/reset-requests`, { headers: SAME_ORIGIN, data: { newValue: 1, reason: REASON_20 } });
  expect(again.status(), await again.text()).toBe(200);
  await visit(other, '/resets');
  await other.getByTestId('reset-filter-state').selectOption('PENDING');
  const pending = other.locator(`[data-testid="reset-row"][data-counter-id="${counterId}"]`);
  await expect(pending).toHaveCount(1);
  await expect(pending.getByTestId('reset-values')).toHaveText('2 → 1');
  await pending.getByTestId('reset-action-REJECT').click();
  await expect(other.getByTestId('reset-done')).toHaveAttribute('data-state', 'REJECTED');
  await expect(pending).toHaveCount(0); // no longer pending
  await other.getByTestId('reset-filter-state').selectOption('REJECTED');
  await expect(other.locator(`[data-testid="reset-row"][data-counter-id="${counterId}"][data-state="REJECTED"]`)).toHaveCount(1);
  const counters = await (await page.request.get(`${REST}/counters`)).json();
  const letter = counters.find((c: { id: number }) => String(c.id) === counterId);
  expect(letter.lastNumber).toBe(2);
  await other.context().close();
});

test('staff are refused on the admin pages, and get 403 from the same actions over the API', async ({ page, baseURL }) => {
  // a pending reset request on LCBP3-C4 / NOTICE, made by a super admin through the API
  const admin = await apiRequest.newContext({ baseURL, extraHTTPHeaders: SAME_ORIGIN });
  const loggedIn = await admin.post('/api/v1/auth/login', { data: { username: ADMIN.user, password: ADMIN.password } });
  expect(loggedIn.status()).toBe(200);
  const notice = { ...LETTER, correspondenceTypeCode: 'NOTICE' };
  const n = await reserve(admin, notice);
  expect((await admin.post(`${REST}/confirm`, { data: { token: n.token, documentId: 'DOC-E2E-NOTICE-1' } })).status()).toBe(200);
  const counters = await (await admin.get(`${REST}/counters`)).json();
  const counter = counters.find((c: { projectCode: string; correspondenceTypeCode: string }) => c.projectCode === 'LCBP3-C4' && c.correspondenceTypeCode === 'NOTICE');
  const req = await admin.post(`${REST}/counters/${counter.id}/reset-requests`, { data: { newValue: 1, reason: REASON_20 } });
  expect(req.status(), await req.text()).toBe(200);
  const publicId = (await req.json()).workflow.instancePublicId;

  await login(page, STAFF);
  for (const link of ['nav-counters', 'nav-resets']) await expect(page.getByTestId(link)).toHaveCount(0);
  for (const path of ['/counters', '/resets']) {
    await visit(page, path);
    await expect(page.getByTestId('error')).toHaveText('คุณไม่มีสิทธิ์ใช้หน้านี้');
    await expect(page.getByTestId('no-access-role')).toBeVisible();
    await expect(page.getByTestId('counter-table')).toHaveCount(0);
    await expect(page.getByTestId('reset-table')).toHaveCount(0);
    await expect(page.getByTestId('superadmin-ops')).toHaveCount(0);
  }

  // the same actions with the staff's session cookie
  const calls: [string, Promise<{ status(): number }>][] = [
    ['list counters', page.request.get(`${REST}/counters`)],
    ['numbers of a counter', page.request.get(`${REST}/counters/${counter.id}/numbers`)],
    ['request a reset', page.request.post(`${REST}/counters/${counter.id}/reset-requests`, { headers: SAME_ORIGIN, data: { newValue: 0, reason: REASON_20 } })],
    ['list reset requests', page.request.get('/api/v1/workflow/reset-requests')],
    ['approve a reset', page.request.post(`/api/v1/workflow/${publicId}/actions/APPROVE`, { headers: SAME_ORIGIN, data: {} })],
    ['reject a reset', page.request.post(`/api/v1/workflow/${publicId}/actions/REJECT`, { headers: SAME_ORIGIN, data: {} })],
    [
      'void and replace',
      page.request.post(`${REST}/void-and-replace`, {
        headers: SAME_ORIGIN,
        data: { projectCode: 'LCBP3-C4', correspondenceTypeCode: 'NOTICE', documentNumber: n.documentNumber, reason: 'ทดสอบสิทธิ์' },
      }),
    ],
    ['manual override (register)', page.request.post(`${REST}/manual-override`, { headers: SAME_ORIGIN, data: { counterId: counter.id, documentNumber: 'คคง.-ผรม.2-0099-2568', reason: 'ทดสอบสิทธิ์' } })],
    ['manual override (set)', page.request.post(`${REST}/manual-override`, { headers: SAME_ORIGIN, data: { counterId: counter.id, value: 50, reason: 'ทดสอบสิทธิ์' } })],
  ];
  for (const [what, call] of calls) expect((await call).status(), what).toBe(403);

  // nothing moved
  const after = await (await admin.get(`/api/v1/workflow/${publicId}`)).json();
  expect(after.workflow.currentState).toBe('PENDING');
  const numbers = await (await admin.get(`${REST}/counters/${counter.id}/numbers`)).json();
  expect(numbers.counter.lastNumber).toBe(1);
  expect(numbers.numbers.map((x: { status: string }) => x.status)).toEqual(['CONFIRMED']);
  await admin.dispose();
});
