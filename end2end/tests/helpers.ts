import { expect, type Page } from '@playwright/test';

export const ADMIN = {
  user: process.env.ADMIN_USER ?? 'admin',
  password: process.env.ADMIN_PASSWORD ?? '',
};
export const STAFF = {
  user: process.env.STAFF_USER ?? 'staff',
  password: process.env.STAFF_PASSWORD ?? '',
};
// admin pages: a second super admin (resets need two people) and a project admin of LCBP3-C4 (scripts/e2e.sh)
export const ADMIN2 = {
  user: process.env.ADMIN2_USER ?? 'admin2',
  password: process.env.ADMIN2_PASSWORD ?? '',
};
export const PADMIN = {
  user: process.env.PADMIN_USER ?? 'padmin',
  password: process.env.PADMIN_PASSWORD ?? '',
};

/**
 * The Origin a page's own script sends with a state-changing request. The server refuses cookie-authenticated
 * changes without it (docs/rules/api.md#callers-and-authentication: CSRF); the browser sends it by itself, Playwright's request context does not.
 */
export const SAME_ORIGIN = { Origin: new URL(process.env.BASE_URL ?? 'http://127.0.0.1:3000').origin };

/** The WASM bundle has hydrated the page (App sets this marker from an effect). */
export async function waitHydrated(page: Page) {
  try {
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
  } catch (e) {
    throw new Error(
      `the page never hydrated: is /pkg/<name>.wasm served under the name the hydration script asks for? (${e})`,
    );
  }
}

/** Logs in through the login page: a plain form (the page loads no bundle), answered with the reserve page. */
export async function login(page: Page, who: { user: string; password: string }) {
  await page.goto('/login');
  await page.getByTestId('login-username').fill(who.user);
  await page.getByTestId('login-password').fill(who.password);
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(/\/$/);
  // in the bar, or folded into the menu on a phone
  await expect(page.getByTestId('logout')).toBeAttached();
}

/**
 * Logs in and waits for the reserve page it lands on to be live (its staff script there): a choice made before the
 * script is there is acted on only at the next change, so a test that chooses at once would race it.
 */
export async function loginLive(page: Page, who: { user: string; password: string }) {
  await login(page, who);
  await waitHydrated(page);
}

/** Chooses the option whose `data-code` is `code` (values are ids, which the tests do not know). */
export async function selectByCode(page: Page, testId: string, code: string) {
  const select = page.getByTestId(testId);
  const option = select.locator(`option[data-code="${code}"]`);
  await expect(option).toHaveCount(1);
  const value = await option.getAttribute('value');
  await select.selectOption(value!);
}

/** Collects console errors and uncaught page errors from now on. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  return errors;
}

/** Requests to server functions or the REST API made from now on. */
export function recordApiRequests(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (req) => {
    const path = new URL(req.url()).pathname;
    if (path.startsWith('/sfn') || path.startsWith('/api')) urls.push(`${req.method()} ${path}`);
  });
  return urls;
}

/** Opens the header's "more" disclosure (the admin pages used less often), unless it is open. */
export async function openMore(page: Page) {
  const more = page.getByTestId('nav-more');
  if ((await more.getAttribute('open')) === null) await more.locator('summary').click();
}
