import { expect, test, type Page } from '@playwright/test';
import { STAFF, selectByCode } from './helpers';

// Staff on a phone whose browser runs no scripts (or before the bundle arrives): every staff flow is a plain HTML
// form that posts to the server. Only this test takes numbers from LCBP3 / LETTER / สคฉ.3 → กทท.
test.use({ javaScriptEnabled: false });

async function loginWithoutScripts(page: Page) {
  await page.goto('/login');
  await page.getByTestId('login-username').fill(STAFF.user);
  await page.getByTestId('login-password').fill(STAFF.password);
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(/\/$/);
}

test('with scripts off the language switch works, and comes back to the page it was on', async ({ page }) => {
  await page.goto('/login');
  await expect(page.locator('html')).toHaveAttribute('lang', 'th');
  await page.getByTestId('lang-switch').click();
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.getByTestId('login-submit')).toHaveText('Log in');
  await page.getByTestId('lang-switch').click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'th');
  await expect(page.getByTestId('login-submit')).not.toHaveText('Log in');
});

test('with scripts off a person logs in, takes a number, confirms it, cancels another and logs out', async ({ page }) => {
  // a wrong password is said on the page the form comes back to
  await page.goto('/login');
  await page.getByTestId('login-username').fill(STAFF.user);
  await page.getByTestId('login-password').fill('not-the-password');
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByTestId('error')).toHaveText('ชื่อผู้ใช้หรือรหัสผ่านไม่ถูกต้อง');

  await loginWithoutScripts(page);
  // the form and its choice lists are in the page the server sent: nothing waits for a script
  await expect(page.locator('form[data-testid="reserve-form"]')).toHaveCount(1);
  await expect(page.getByTestId('select-project').locator('option[data-code="LCBP3"]')).toHaveCount(1);

  // a step of its own for the parts the template asks for
  await selectByCode(page, 'select-project', 'LCBP3');
  await selectByCode(page, 'select-type', 'LETTER');
  await page.getByTestId('choose-step').click();
  await expect(page.getByTestId('select-originator')).toBeVisible();
  await expect(page.getByTestId('resolved-template')).toHaveText('{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}');
  await selectByCode(page, 'select-originator', 'สคฉ.3');
  await selectByCode(page, 'select-recipient', 'กทท.');
  await page.getByTestId('choose-step').click();
  await expect(page.getByTestId('preview-number')).toHaveText('สคฉ.3-กทท.-0001-2568');

  // reserve, then confirm with a document id
  await page.getByTestId('reserve-button').click();
  await expect(page.getByTestId('reserved-number')).toHaveText('สคฉ.3-กทท.-0001-2568');
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'RESERVED');
  await expect(page.getByTestId('ttl-countdown')).toHaveText(/^0[45]:\d\d$/);
  await page.getByTestId('document-id').fill('DOC-NOSCRIPT-0001');
  await page.getByTestId('confirm-button').click();
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'CONFIRMED');
  await expect(page.getByTestId('reserved-number')).toHaveText('สคฉ.3-กทท.-0001-2568');

  // the next one, with the same choices, cancelled with a reason
  await page.getByTestId('new-reservation').click();
  await expect(page.getByTestId('reservation')).toHaveCount(0);
  await expect(page.getByTestId('preview-number')).toHaveText('สคฉ.3-กทท.-0002-2568');
  await page.getByTestId('reserve-button').click();
  await expect(page.getByTestId('reserved-number')).toHaveText('สคฉ.3-กทท.-0002-2568');
  await page.getByTestId('cancel-reason').fill('จองซ้ำโดยไม่ได้ตั้งใจ');
  await page.getByTestId('cancel-button').click();
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'CANCELLED');

  // a cancelled number is never handed out again
  await page.getByTestId('new-reservation').click();
  await expect(page.getByTestId('preview-number')).toHaveText('สคฉ.3-กทท.-0003-2568');

  // log out
  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto('/');
  await expect(page).toHaveURL(/\/login$/);
});
