import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { ADMIN, SAME_ORIGIN, STAFF, login, loginLive, selectByCode, waitHydrated } from './helpers';

// Accessibility: axe-core on every page, in Thai and in English, at an office screen and a phone,
// as a super admin and as staff: no violation of any impact. And the reserve flow by keyboard alone, the focus kept
// when a live event draws the page again. Only this file
// takes numbers from LCBP3-C1 / MOM ผรม.2 → สคฉ.3 (and one of LCBP3-C1 / NOTICE, phone.spec.ts' counter).

const ADMIN_PAGES = ['/', '/blocks', '/account', '/templates', '/tokens', '/audit', '/errors', '/counters', '/charts', '/resets', '/reference', '/import', '/users', '/logins', '/notifications'];
const STAFF_PAGES = ['/', '/blocks', '/account'];
const SIZES = [
  { width: 1366, height: 768 },
  { width: 390, height: 844 },
];

async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.map(
    (v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 4).join(' | ')}`,
  );
}

async function setLang(page: Page, lang: 'th' | 'en') {
  const now = await page.locator('html').getAttribute('lang');
  if (now !== lang) {
    await page.getByTestId('lang-switch').click();
    await expect(page.locator('html')).toHaveAttribute('lang', lang);
  }
}

for (const size of SIZES) {
  test.describe(`at ${size.width} × ${size.height}`, () => {
    test.use({ viewport: size });

    test('the login page has no accessibility violation', async ({ page }) => {
      await page.goto('/login');
      expect(await violations(page)).toEqual([]);
    });

    for (const [who, user, pages] of [['a super admin', ADMIN, ADMIN_PAGES], ['staff', STAFF, STAFF_PAGES]] as const) {
      test(`every page of ${who} has no accessibility violation, in Thai and in English`, async ({ page }) => {
        // fourteen pages, two languages, axe on each: about 45 s on an idle machine, more beside other builds
        test.setTimeout(180_000);
        await login(page, user);
        if (user === ADMIN) {
          // rows for every table: a number (counters, audit), a token, an error-log row
          const REST = '/api/v1/document-numbering';
          const number = { projectCode: 'LCBP3-C1', correspondenceTypeCode: 'NOTICE', originatorCode: 'ผรม.2', recipientCode: 'สคฉ.3' };
          expect((await page.request.post(`${REST}/reserve`, { headers: SAME_ORIGIN, data: number })).status()).toBe(200);
          const bad = { ...number, projectCode: `NO-SUCH-PROJECT-${size.width}` };
          expect((await page.request.post(`${REST}/reserve`, { headers: SAME_ORIGIN, data: bad })).status()).toBeGreaterThanOrEqual(400);
          const token = await page.request.post('/api/v1/admin/api-tokens', { headers: SAME_ORIGIN, data: { name: `a11y-${size.width}` } });
          expect(token.status(), await token.text()).toBeLessThan(300);
        }
        const found: string[] = [];
        for (const lang of ['th', 'en'] as const) {
          for (const path of pages) {
            await page.goto(path);
            await waitHydrated(page);
            await setLang(page, lang);
            // the charts load after hydration: check them drawn
            if (path === '/charts') {
              await expect(page.getByTestId('usage-chart')).toBeAttached();
              for (const fold of await page.locator('details.chart-data summary').all()) await fold.click();
            }
            for (const v of await violations(page)) found.push(`${lang} ${path}: ${v}`);
          }
        }
        expect(found).toEqual([]);
      });
    }
  });
}

/** Presses Tab until the element of `testId` has the focus (the keyboard's way there, in page order). */
async function tabTo(page: Page, testId: string) {
  for (let i = 0; i < 80; i++) {
    if (await page.evaluate((id) => (document.activeElement as HTMLElement | null)?.dataset?.testid === id, testId)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${testId}`);
}

/** Chooses an option of a select with the arrow keys alone (reading which one is chosen, never setting it). */
async function chooseByKeys(page: Page, testId: string, code: string) {
  await tabTo(page, testId);
  const chosen = () => page.getByTestId(testId).evaluate((el) => (el as HTMLSelectElement).selectedOptions[0]?.dataset.code ?? '');
  for (let i = 0; i < 60 && (await chosen()) !== code; i++) await page.keyboard.press('ArrowDown');
  expect(await chosen()).toBe(code);
}

test('staff reserve and confirm a number by keyboard alone', async ({ page }) => {
  await login(page, STAFF);
  await page.goto('/');
  await waitHydrated(page);
  await chooseByKeys(page, 'select-project', 'LCBP3-C1');
  await chooseByKeys(page, 'select-type', 'MOM');
  await chooseByKeys(page, 'select-originator', 'ผรม.2');
  await chooseByKeys(page, 'select-recipient', 'สคฉ.3');
  const preview = page.getByTestId('preview-number');
  await expect(preview).toHaveText(/^ผรม\.2-สคฉ\.3-.*2568$/);
  const expected = (await preview.innerText()).trim();
  await tabTo(page, 'reserve-button');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('reserved-number')).toHaveText(expected);
  await tabTo(page, 'document-id');
  await page.keyboard.type('DOC-KEYS-0001');
  await tabTo(page, 'confirm-button');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'CONFIRMED');
});

test('the confirm button keeps the focus when a live event draws the page again', async ({ page }) => {
  await loginLive(page, STAFF);
  const mom = { projectCode: 'LCBP3-C1', correspondenceTypeCode: 'MOM', originatorCode: 'ผรม.2', recipientCode: 'สคฉ.3' };
  await selectByCode(page, 'select-project', mom.projectCode);
  await selectByCode(page, 'select-type', mom.correspondenceTypeCode);
  await selectByCode(page, 'select-originator', mom.originatorCode);
  await selectByCode(page, 'select-recipient', mom.recipientCode);
  await expect(page.getByTestId('preview-number')).toHaveText(/^ผรม\.2-สคฉ\.3-.*2568$/);
  await expect(page.locator('body[data-live="open"]')).toBeAttached({ timeout: 15_000 });
  await page.getByTestId('reserve-button').click();
  await expect(page.getByTestId('reserved-number')).toBeVisible();
  await page.getByTestId('document-id').fill('DOC-KEYS-0002');
  await page.getByTestId('confirm-button').focus();
  // another number of the same counter: its live event draws the part again (the preview moves on, marked stale)
  expect((await page.request.post('/api/v1/document-numbering/reserve', { headers: SAME_ORIGIN, data: mom })).status()).toBe(200);
  await expect(page.getByTestId('preview-stale')).toBeVisible();
  expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset?.testid)).toBe('confirm-button');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'CONFIRMED');
});
