import { expect, test } from '@playwright/test';
import { ADMIN, ADMIN2, SAME_ORIGIN, login, waitHydrated } from './helpers';

// Notifications: webhooks managed from /notifications, and the header's count of what waits for
// the viewer. Runs against the shared database: only this file takes numbers from LCBP3-C2 / MEMO ผรม.1 → กทท., and
// it counts the reset requests waiting relative to what other files left.

const REST = '/api/v1/document-numbering';
const MEMO = { projectCode: 'LCBP3-C2', correspondenceTypeCode: 'MEMO', originatorCode: 'ผรม.1', recipientCode: 'กทท.' };
const REASON = 'ขอรีเซ็ตตัวนับเพื่อทดสอบการแจ้งเตือน';

test('a super admin adds a webhook from the page: the secret is shown once, the webhook can be disabled and deleted', async ({ page }) => {
  await login(page, ADMIN);
  await page.goto('/notifications');
  await waitHydrated(page);
  await expect(page.getByTestId('no-access')).toHaveCount(0);
  // a receiver that does not answer: deleted at the end, so other files' events are not sent to it for long
  const url = `http://127.0.0.1:9/e2e-hook-${Date.now()}`;
  await page.getByTestId('webhook-url').fill(url);
  await page.locator('[data-testid="webhook-kind"][data-kind="RESET_REQUESTED"]').check();
  await page.getByTestId('webhook-create').click();
  await expect(page.getByTestId('webhook-secret')).toHaveText(/^[0-9a-f]{64}$/);
  const row = page.locator('[data-testid="webhook-row"]', { hasText: url });
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('webhook-state')).toHaveText('ใช้งาน');
  await expect(row).toContainText('ขอรีเซ็ตตัวนับ');

  // the list shows no secret, over REST either
  const listed = await (await page.request.get('/api/v1/notifications/webhooks')).json();
  const mine = listed.find((w: { url: string }) => w.url === url);
  expect(mine).toBeTruthy();
  expect(mine.secret).toBeUndefined();

  await row.getByTestId('webhook-toggle').click();
  await expect(row.getByTestId('webhook-state')).toHaveText('ปิดอยู่');
  await row.getByTestId('webhook-delete').click();
  await expect(row).toHaveCount(0);

  // a URL that is not http(s) is refused with the Thai message
  await page.getByTestId('webhook-url').fill('ftp://example.com/hook');
  await page.getByTestId('webhook-create').click();
  await expect(page.getByTestId('error')).toContainText('http:// หรือ https://');
});

test('a reset request by another super admin shows in the header count, which links to the requests', async ({ page, browser, baseURL }) => {
  await login(page, ADMIN);
  const waiting = async () => (await (await page.request.get('/api/v1/notifications/waiting')).json()).resetRequests as number;
  const before = await waiting();

  // the second super admin takes a number and asks for its counter to be reset
  const context = await browser.newContext({ baseURL, locale: 'th-TH' });
  const other = await context.newPage();
  await login(other, ADMIN2);
  const reserved = await other.request.post(`${REST}/reserve`, { headers: SAME_ORIGIN, data: MEMO });
  expect(reserved.status(), await reserved.text()).toBe(200);
  const counters = await (await other.request.get(`${REST}/counters`)).json();
  const counter = counters.find(
    (c: { projectCode: string; correspondenceTypeCode: string; lastNumber: number }) =>
      c.projectCode === MEMO.projectCode && c.correspondenceTypeCode === MEMO.correspondenceTypeCode && c.lastNumber > 0,
  );
  expect(counter).toBeTruthy();
  const asked = await other.request.post(`${REST}/counters/${counter.id}/reset-requests`, {
    headers: SAME_ORIGIN,
    data: { newValue: 0, reason: REASON },
  });
  expect(asked.status(), await asked.text()).toBe(200);
  expect(await waiting()).toBe(before + 1);

  // the first super admin's header counts it (after a page change), and leads to the requests
  await page.goto('/');
  await waitHydrated(page);
  const badge = page.getByTestId('waiting-badge');
  await expect(badge).toHaveText(String(before + 1));
  await expect(badge).toHaveAttribute('aria-label', /คำขอรีเซ็ตที่รอคุณอนุมัติ/);
  await badge.click();
  await expect(page).toHaveURL(/\/resets$/);

  // the requester's own header does not count their request
  const theirs = (await (await other.request.get('/api/v1/notifications/waiting')).json()).resetRequests as number;
  expect(theirs).toBe(before);
  await context.close();
});
