import { expect, test, type Page } from '@playwright/test';
import { ADMIN, STAFF, collectErrors, login, waitHydrated } from './helpers';

async function visit(page: Page, path: string) {
  await page.goto(path);
  await waitHydrated(page);
  await page.waitForLoadState('networkidle');
}

test('the login page is whole without a script, and raises no console error', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/login');
  await page.waitForLoadState('networkidle');
  expect(await page.evaluate(() => Array.from(document.scripts).filter((s) => s.src || s.type === 'module').length)).toBe(0);
  await expect(page.locator('html')).toHaveAttribute('lang', 'th');
  await expect(page.getByTestId('login-submit')).toBeEnabled();
  expect(errors).toEqual([]);
});

test('the staff pages hydrate without console errors', async ({ page }) => {
  await login(page, STAFF);
  const errors = collectErrors(page);
  await visit(page, '/');
  await expect(page.getByTestId('select-project')).toBeVisible();
  // interactive after hydration: choosing a project offers its organizations
  await page.getByTestId('select-project').selectOption({ index: 1 });
  await expect(page.getByTestId('user-name')).toBeVisible();
  // staff see no admin links
  await expect(page.getByTestId('nav-templates')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('the admin pages hydrate without console errors', async ({ page }) => {
  await login(page, ADMIN);
  const errors = collectErrors(page);
  for (const path of ['/', '/templates', '/tokens', '/audit', '/errors']) {
    await visit(page, path);
    await expect(page.getByTestId('logout')).toBeVisible();
  }
  await expect(page.getByTestId('error-filter-type')).toBeVisible();
  await visit(page, '/audit');
  await expect(page.getByTestId('audit-row').first()).toBeVisible();
  await visit(page, '/tokens');
  await expect(page.getByTestId('token-name')).toBeVisible();
  await visit(page, '/templates');
  await expect(page.getByTestId('template-input')).toBeVisible();
  expect(errors).toEqual([]);
});

test('the language switch changes the words and is remembered', async ({ page }) => {
  await login(page, STAFF);
  const errors = collectErrors(page);
  const nav = page.getByTestId('nav-reserve');
  await expect(nav).toHaveText('ออกเลขที่');
  await page.getByTestId('lang-switch').click();
  await expect(nav).toHaveText('Numbers');
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  // the server renders the remembered language, so the page hydrates in English
  await visit(page, '/');
  await expect(nav).toHaveText('Numbers');
  await page.getByTestId('lang-switch').click();
  await expect(nav).toHaveText('ออกเลขที่');
  expect(errors).toEqual([]);
});

test('logout returns to the login page', async ({ page }) => {
  await login(page, STAFF);
  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto('/');
  await expect(page).toHaveURL(/\/login$/);
});

test('a super admin sees every navigation link on one line at 1366 px, in Thai and in English', async ({ page }) => {
  await page.setViewportSize({ width: 1366, height: 768 });
  await login(page, ADMIN);
  const errors = collectErrors(page);
  // the links in the bar and the "more" disclosure (its links open under the bar)
  const links = page.locator('.topbar .nav > a, .topbar .nav summary');
  for (const lang of ['th', 'en']) {
    await expect(page.locator('html')).toHaveAttribute('lang', lang);
    expect(await links.count()).toBeGreaterThanOrEqual(6);
    const boxes = await links.evaluateAll((as) => as.map((a) => a.getBoundingClientRect()).map((r) => ({ top: Math.round(r.top), right: r.right })));
    expect(new Set(boxes.map((b) => b.top)).size, JSON.stringify(boxes)).toBe(1);
    // nothing pushed off the screen either: the user's name, logout and the language switch fit beside them
    for (const id of ['user-name', 'logout', 'lang-switch']) {
      const box = await page.getByTestId(id).boundingBox();
      expect(box && box.x + box.width <= 1366, id).toBeTruthy();
      expect(box && Math.abs(box.y - boxes[0].top) < 40, `${id} on the nav's line`).toBeTruthy();
    }
    if (lang === 'th') await page.getByTestId('lang-switch').click();
  }
  await page.getByTestId('lang-switch').click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'th');
  expect(errors).toEqual([]);
});
