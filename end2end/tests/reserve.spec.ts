import { expect, test } from '@playwright/test';
import { STAFF, selectByCode, loginLive } from './helpers';

// Runs against a fresh database with the demo data and the service clock at 2025-06-15 (B.E. 2568).
// Only this test takes numbers from the LCBP3 / LETTER / คคง. → สคฉ.3 counter.
test('staff reserves, sees the countdown and confirms a letter number', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await loginLive(page, STAFF);

  await selectByCode(page, 'select-project', 'LCBP3');
  await selectByCode(page, 'select-type', 'LETTER');
  await expect(page.getByTestId('select-originator')).toBeVisible();
  await selectByCode(page, 'select-originator', 'คคง.');
  await selectByCode(page, 'select-recipient', 'สคฉ.3');

  // the letter template shows neither sub-type nor RFA parts
  await expect(page.getByTestId('select-subtype')).toHaveCount(0);
  await expect(page.getByTestId('select-rfatype')).toHaveCount(0);
  await expect(page.getByTestId('select-discipline')).toHaveCount(0);

  await expect(page.getByTestId('preview-number')).toHaveText('คคง.-สคฉ.3-0001-2568');
  await expect(page.getByTestId('preview-note')).toBeVisible();

  await page.getByTestId('reserve-button').click();
  await expect(page.getByTestId('reserved-number')).toHaveText('คคง.-สคฉ.3-0001-2568');
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'RESERVED');
  // words, not the code: once, without the code beside them
  await expect(page.getByTestId('status')).toHaveText('จองแล้ว (รอยืนยัน)');
  await expect(page.getByTestId('reservation')).not.toContainText('RESERVED');

  // the countdown runs
  const countdown = page.getByTestId('ttl-countdown');
  await expect(countdown).toHaveText(/^\d\d:\d\d$/);
  const seconds = async () => {
    const [m, s] = (await countdown.innerText()).split(':').map(Number);
    return m * 60 + s;
  };
  const first = await seconds();
  expect(first).toBeGreaterThan(0);
  await expect.poll(seconds, { timeout: 5_000 }).toBeLessThan(first);

  // copy: the browser may refuse the clipboard; either way the page says what happened
  await page.getByTestId('copy-button').click();
  await expect(page.getByTestId('copy-result')).toBeVisible();
  const copied = await page.getByTestId('copy-result').getAttribute('class');
  if (copied?.includes('ok')) {
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('คคง.-สคฉ.3-0001-2568');
  }

  // the preview moved on: the reserved number is taken
  await expect(page.getByTestId('preview-number')).toHaveText('คคง.-สคฉ.3-0002-2568');

  await page.getByTestId('document-id').fill('DOC-E2E-0001');
  await page.getByTestId('confirm-button').click();
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'CONFIRMED');
  await expect(page.getByTestId('reserved-number')).toHaveText('คคง.-สคฉ.3-0001-2568');
  await expect(page.getByTestId('preview-number')).toHaveText('คคง.-สคฉ.3-0002-2568');
  await expect(page.getByTestId('error')).toHaveCount(0);
});

test('cancelling a reservation leaves the number unused and never reused', async ({ page }) => {
  await loginLive(page, STAFF);
  await selectByCode(page, 'select-project', 'LCBP3-C1');
  await selectByCode(page, 'select-type', 'MEMO');
  await selectByCode(page, 'select-originator', 'ผรม.1');
  await selectByCode(page, 'select-recipient', 'กทท.');
  const preview = page.getByTestId('preview-number');
  await expect(preview).toHaveText(/^ผรม\.1-กทท\.-\d{4}-2568$/);
  const reserved = (await preview.innerText()).trim();

  await page.getByTestId('reserve-button').click();
  await expect(page.getByTestId('reserved-number')).toHaveText(reserved);
  await page.getByTestId('cancel-button').click();
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'CANCELLED');
  // the next number is not the cancelled one
  await expect(preview).not.toHaveText(reserved);
  await expect(page.getByTestId('confirm-button')).toHaveCount(0);
});

test('the form follows the resolved template: sub-type for TRANSMITTAL, RFA type and discipline for RFA', async ({ page }) => {
  await loginLive(page, STAFF);
  await selectByCode(page, 'select-project', 'LCBP3');

  await selectByCode(page, 'select-type', 'TRANSMITTAL');
  await expect(page.getByTestId('select-subtype')).toBeVisible();
  await expect(page.getByTestId('select-originator')).toBeVisible();
  await expect(page.getByTestId('select-recipient')).toBeVisible();
  await expect(page.getByTestId('select-rfatype')).toHaveCount(0);
  await expect(page.getByTestId('select-discipline')).toHaveCount(0);
  // only TRANSMITTAL's sub-types are offered
  await expect(page.getByTestId('select-subtype').locator('option[data-code]')).toHaveCount(5);

  await selectByCode(page, 'select-type', 'RFA');
  await expect(page.getByTestId('select-rfatype')).toBeVisible();
  await expect(page.getByTestId('select-discipline')).toBeVisible();
  await expect(page.getByTestId('select-recipient')).toHaveCount(0);
  await expect(page.getByTestId('select-originator')).toHaveCount(0);
  await expect(page.getByTestId('select-subtype')).toHaveCount(0);
  // the RFA template shows {REV}
  await expect(page.getByTestId('revision')).toBeVisible();

  await selectByCode(page, 'select-rfatype', 'RPT');
  await selectByCode(page, 'select-discipline', 'TER');
  await expect(page.getByTestId('preview-number')).toHaveText('LCBP3-RFA-TER-RPT-0001-A');
  await page.getByTestId('revision').fill('B');
  await expect(page.getByTestId('preview-number')).toHaveText('LCBP3-RFA-TER-RPT-0001-B');

  await selectByCode(page, 'select-type', 'LETTER');
  await expect(page.getByTestId('select-rfatype')).toHaveCount(0);
  await expect(page.getByTestId('select-recipient')).toBeVisible();
  await expect(page.getByTestId('revision')).toHaveCount(0);
});

test('a visitor who is not logged in is sent to the login page', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByTestId('login-username')).toBeVisible();
});

test('a wrong password shows the server error', async ({ page }) => {
  await page.goto('/login');
  await page.getByTestId('login-username').fill(STAFF.user);
  await page.getByTestId('login-password').fill(`${STAFF.password}-wrong`);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('error')).toBeVisible();
  await expect(page).toHaveURL(/\/login$/);
});

// Only this test takes numbers from LCBP3-C1 / MEMO / กทท. → ผรม.1.
test('a reserve that does not get through offers a retry that reserves the number once', async ({ page }) => {
  await loginLive(page, STAFF);
  await selectByCode(page, 'select-project', 'LCBP3-C1');
  await selectByCode(page, 'select-type', 'MEMO');
  await selectByCode(page, 'select-originator', 'กทท.');
  await selectByCode(page, 'select-recipient', 'ผรม.1');
  const preview = page.getByTestId('preview-number');
  await expect(preview).toHaveText(/^กทท\.-ผรม\.1-\d{4}-2568$/);
  const expected = (await preview.innerText()).trim();

  // the first post meets a server that cannot take it (a proxy's 503 while an instance restarts): the page stays,
  // says so, and offers the same post again
  let posts = 0;
  await page.route('**/forms/reserve', async (route) => {
    if (posts++ === 0) {
      await route.fulfill({ status: 503, contentType: 'text/plain', body: 'Service Unavailable' });
    } else {
      await route.continue();
    }
  });
  await page.getByTestId('reserve-button').click();
  await expect(page.getByTestId('error')).toContainText('ลองอีกครั้ง');
  await expect(page.getByTestId('reserved-number')).toHaveCount(0);
  await expect(page.getByTestId('reserve-button')).toBeEnabled();

  await page.getByTestId('retry-button').click();
  await expect(page.getByTestId('reserved-number')).toHaveText(expected);
  await expect(page.getByTestId('retry-button')).toHaveCount(0);
  await expect(page.getByTestId('error')).toHaveCount(0);
  expect(posts).toBe(2);
});
