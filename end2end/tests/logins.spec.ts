import { test, expect, type Page } from '@playwright/test';
import { ADMIN, STAFF, login, waitHydrated, openMore } from './helpers';

// The record of logins (docs/rules/api.md#callers-and-authentication): a failed login made in the browser shows up on /logins for a
// super admin, with its outcome and the browser's address and user agent; a staff user has no link to the page
// and the page refuses them.

const suffix = `${Date.now() % 1_000_000}`;

async function visit(page: Page, path: string) {
  await page.goto(path);
  await waitHydrated(page);
}

test('a super admin sees on /logins the failed login made a moment ago', async ({ page, browser }) => {
  // a failed login under a username nobody else uses, in a browser of its own
  const stranger = `e2e-nobody-${suffix}`;
  const context = await browser.newContext();
  const other = await context.newPage();
  await other.goto('/login');
  await other.getByTestId('login-username').fill(stranger);
  await other.getByTestId('login-password').fill('not-a-password-here');
  await other.getByTestId('login-submit').click();
  await expect(other.getByTestId('error')).toContainText('ชื่อผู้ใช้หรือรหัสผ่านไม่ถูกต้อง');
  const agent = await other.evaluate(() => navigator.userAgent);
  await context.close();

  await login(page, ADMIN);
  await openMore(page);
  await page.getByTestId('nav-logins').click();
  await expect(page).toHaveURL(/\/logins$/);
  await waitHydrated(page);
  await expect(page.getByTestId('logins-table')).toBeVisible();
  await page.getByTestId('logins-filter-username').fill(stranger);
  await page.getByTestId('logins-search').click();
  const row = page.locator(`[data-testid="login-row"][data-username="${stranger}"]`);
  await expect(row).toHaveCount(1);
  await expect(page.getByTestId('logins-total')).toHaveAttribute('data-total', '1');
  await expect(row).toHaveAttribute('data-outcome', 'UNKNOWN_USER');
  await expect(row.getByTestId('login-row-outcome')).toHaveText('ไม่พบชื่อผู้ใช้');
  await expect(row.getByTestId('login-row-address')).toHaveText('127.0.0.1');
  await expect(row.getByTestId('login-row-agent')).toHaveText(agent);

  // the outcome filter: the admin's own successful login is there, the stranger's failure is not
  await page.getByTestId('logins-filter-username').fill(ADMIN.user);
  await page.getByTestId('logins-search').click();
  await page.getByTestId('logins-filter-outcome').selectOption('OK');
  await expect(page.locator('[data-testid="login-row"]').first()).toHaveAttribute('data-username', ADMIN.user);
  await expect(page.locator('[data-testid="login-row"][data-outcome="OK"]').first()).toBeVisible();
  await expect(page.locator(`[data-testid="login-row"][data-username="${stranger}"]`)).toHaveCount(0);
});

test('a staff user has no link to /logins and the page refuses them', async ({ page }) => {
  await login(page, STAFF);
  await expect(page.getByTestId('nav-logins')).toHaveCount(0);
  await visit(page, '/logins');
  await expect(page.getByTestId('no-access')).toBeVisible();
  await expect(page.getByTestId('no-access-role')).toContainText('SUPER_ADMIN');
  await expect(page.getByTestId('logins-table')).toHaveCount(0);
  // and the server refuses the data whatever the page does
  const res = await page.request.get('/api/v1/admin/login-attempts');
  expect(res.status()).toBe(403);
});
