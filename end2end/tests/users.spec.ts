import { test, expect, type Browser, type Page } from '@playwright/test';
import { ADMIN, PADMIN, login, waitHydrated, openMore } from './helpers';

// Users and tokens: a super admin deactivates a user on /users and that user can no
// longer log in (reactivated, they can); a project admin on /tokens sees only their project's tokens.

const suffix = `${Date.now() % 1_000_000}`;

async function visit(page: Page, path: string) {
  await page.goto(path);
  await waitHydrated(page);
}

/** Tries to log in in a fresh browser context; true when the app let them in. */
async function canLogIn(browser: Browser, user: string, password: string): Promise<boolean> {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto('/login');
    await page.getByTestId('login-username').fill(user);
    await page.getByTestId('login-password').fill(password);
    await page.getByTestId('login-submit').click();
    const outcome = await Promise.race([
      page.getByTestId('logout').waitFor().then(() => true),
      page.getByTestId('error').waitFor().then(() => false),
    ]);
    if (!outcome) await expect(page).toHaveURL(/\/login$/);
    return outcome;
  } finally {
    await context.close();
  }
}

test('a super admin deactivates a user on /users and that user cannot log in', async ({ page, browser }) => {
  const user = `e2e-user-${suffix}`;
  const password = 'e2e-user-pass-1';
  await login(page, ADMIN);
  await openMore(page);
  await page.getByTestId('nav-users').click();
  await expect(page).toHaveURL(/\/users$/);
  await expect(page.getByTestId('users-table')).toBeVisible();

  await page.getByTestId('new-user-username').fill(user);
  await page.getByTestId('new-user-display').fill('ผู้ใช้ทดสอบ');
  await page.getByTestId('new-user-password').fill(password);
  await page.getByTestId('new-user-role').selectOption('STAFF');
  await page.getByTestId('new-user-create').click();
  await expect(page.getByTestId('users-notice')).toContainText(user);
  const row = page.locator(`[data-testid="user-row"][data-username="${user}"]`);
  await expect(row.getByTestId('user-state')).toHaveText('ใช้งานได้');
  expect(await canLogIn(browser, user, password)).toBe(true);

  await row.getByTestId('user-deactivate').click();
  await expect(page.getByTestId('users-notice')).toContainText(user);
  await expect(row.getByTestId('user-state')).toHaveText('ปิดการใช้งาน');
  await expect(row.getByTestId('user-reactivate')).toBeVisible();
  expect(await canLogIn(browser, user, password)).toBe(false);

  // a super admin's own row has no deactivate button
  await expect(page.locator(`[data-testid="user-row"][data-username="${ADMIN.user}"]`).getByTestId('user-deactivate')).toHaveCount(0);

  await row.getByTestId('user-reactivate').click();
  await expect(row.getByTestId('user-state')).toHaveText('ใช้งานได้');
  expect(await canLogIn(browser, user, password)).toBe(true);

  // every change is in the audit log as its own operation
  await visit(page, '/audit');
  for (const op of ['USER_CREATED', 'USER_DEACTIVATED', 'USER_REACTIVATED']) {
    await page.getByTestId('audit-filter-operation').selectOption(op);
    await page.getByTestId('audit-search').click();
    await expect(page.locator(`[data-testid="audit-row"][data-operation="${op}"]`).filter({ hasText: user })).toHaveCount(1);
  }
});

test('a project admin on /tokens sees only the tokens of their project', async ({ page, browser }) => {
  const mine = `e2e-c4-${suffix}`;
  const other = `e2e-c1-${suffix}`;
  await login(page, ADMIN);
  await visit(page, '/tokens');
  for (const [name, code] of [
    [mine, 'LCBP3-C4'],
    [other, 'LCBP3-C1'],
  ]) {
    await page.getByTestId('token-name').fill(name);
    await page.locator(`[data-testid="token-project"][data-code="${code}"]`).check();
    await page.getByTestId('token-create').click();
    await expect(page.getByTestId('token-created')).toBeVisible();
    await expect(page.locator('[data-testid="token-row"]').filter({ hasText: name })).toHaveCount(1);
  }

  const context = await browser.newContext();
  const padmin = await context.newPage();
  await login(padmin, PADMIN);
  await visit(padmin, '/tokens');
  const rows = padmin.getByTestId('token-row');
  await expect(rows.filter({ hasText: mine })).toHaveCount(1);
  await expect(rows.filter({ hasText: other })).toHaveCount(0);
  // nothing of another project, nothing for all projects
  for (const scope of await padmin.getByTestId('token-scope').allTextContents()) {
    expect(scope.trim()).toBe('LCBP3-C4');
  }
  await context.close();
});
