import { expect, test, type Page } from '@playwright/test';
import { ADMIN, SAME_ORIGIN, STAFF, collectErrors, login, selectByCode, waitHydrated } from './helpers';

// Phones: under 640 px the links fold into a menu, wide tables scroll inside themselves, and the
// staff flow works at 360 px. Only this file takes numbers from LCBP3-C1 / NOTICE ผรม.2 → สคฉ.3

/** The page itself never scrolls sideways. */
async function noSidewaysScroll(page: Page) {
  const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  // what sticks out, to say why when it does
  const wide = await page.evaluate((w) =>
    [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > w + 1 && (el.parentElement?.getBoundingClientRect().right ?? 0) <= w + 1)
      .slice(0, 5)
      .map((el) => `${location.pathname} ${el.tagName.toLowerCase()}.${el.className}${el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''} ${Math.round(el.getBoundingClientRect().right)}px`),
    width);
  expect(scroll, `the page is no wider than the screen; sticking out: ${wide.join(', ')}`).toBeLessThanOrEqual(width);
}

test.describe('at 360 × 740', () => {
  test.use({ viewport: { width: 360, height: 740 } });

  test('staff choose, preview, reserve, copy and confirm on a phone, with the links in a menu', async ({ page }) => {
    const errors = collectErrors(page);
    await login(page, STAFF);
    await page.goto('/');
    await waitHydrated(page);

    // the bar is one line: the links wait behind the menu button
    const bar = await page.locator('header.topbar').boundingBox();
    expect(bar!.height).toBeLessThan(80);
    await expect(page.getByTestId('nav-reserve')).toBeHidden();
    await page.getByTestId('menu-toggle').click();
    await expect(page.getByTestId('menu-toggle')).toHaveAttribute('aria-expanded', 'true');
    await expect(page.getByTestId('nav-reserve')).toBeVisible();
    await expect(page.getByTestId('logout')).toBeVisible();
    await page.getByTestId('menu-toggle').click();
    await expect(page.getByTestId('nav-reserve')).toBeHidden();
    await noSidewaysScroll(page);

    await selectByCode(page, 'select-project', 'LCBP3-C1');
    await selectByCode(page, 'select-type', 'NOTICE');
    await selectByCode(page, 'select-originator', 'ผรม.2');
    await selectByCode(page, 'select-recipient', 'สคฉ.3');
    const preview = page.getByTestId('preview-number');
    await expect(preview).toHaveText(/^ผรม\.2-สคฉ\.3-.*2568$/);
    const expected = (await preview.innerText()).trim();
    await page.getByTestId('reserve-button').click();
    const reserved = page.getByTestId('reserved-number');
    await expect(reserved).toHaveText(expected);
    // a long number wraps after a separator, never inside its parts
    const lines = (await reserved.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return [...range.getClientRects()].map((r) => Math.round(r.top));
    }));
    expect(new Set(lines).size).toBeLessThanOrEqual(2);
    await noSidewaysScroll(page);
    await page.getByTestId('copy-button').click();
    await expect(page.getByTestId('copy-result')).toBeVisible();
    await page.getByTestId('document-id').fill('DOC-PHONE-0001');
    await page.getByTestId('confirm-button').click();
    await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'CONFIRMED');
    await noSidewaysScroll(page);

    // the menu takes a page change: it opens, the link goes, it is folded again
    await page.getByTestId('menu-toggle').click();
    await page.getByTestId('nav-reserve').click();
    await expect(page.getByTestId('nav-reserve')).toBeHidden();
    expect(errors).toEqual([]);
  });
});

test.describe('at 390 × 844', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('wide admin tables scroll inside a focusable region, not the page', async ({ page }) => {
    await login(page, ADMIN);
    // a number, so the counter browser and the audit search have rows
    const res = await page.request.post('/api/v1/document-numbering/reserve', {
      headers: SAME_ORIGIN,
      data: { projectCode: 'LCBP3-C1', correspondenceTypeCode: 'NOTICE', originatorCode: 'ผรม.2', recipientCode: 'สคฉ.3' },
    });
    expect(res.status(), await res.text()).toBe(200);
    await page.goto('/tokens');
    await waitHydrated(page);
    await noSidewaysScroll(page);
    const tables = [['/counters', 'counter-table'], ['/audit', 'audit-table'], ['/users', 'users-table'], ['/logins', 'logins-table'], ['/reference', 'ref-table']];
    for (const [path, table] of tables) {
      await page.goto(path);
      await waitHydrated(page);
      await expect(page.getByTestId(table)).toBeVisible();
      await noSidewaysScroll(page);
      const region = page.getByTestId(table).locator('xpath=..');
      await expect(region).toHaveAttribute('role', 'region');
      await expect(region).toHaveAttribute('tabindex', '0');
      // the keyboard scrolls it: focus, then the right arrow
      const [scrollWidth, clientWidth] = await region.evaluate((el) => [el.scrollWidth, el.clientWidth]);
      if (scrollWidth > clientWidth) {
        await region.focus();
        await page.keyboard.press('ArrowRight');
        await expect.poll(() => region.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
      }
    }
  });
});
