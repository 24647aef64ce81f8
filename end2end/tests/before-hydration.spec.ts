import { expect, test, type Page } from '@playwright/test';
import { STAFF, login, waitHydrated } from './helpers';

// What a person enters while the page is still the server's HTML survives the bundle's arrival: hydration sets every
// field to what the page's state holds, which knew nothing of it. The bundle is held back here until the fields are
// filled; the form is then submitted by the hydrated page. Only this file takes numbers of LCBP3 / INSTRUCTION.

/** Holds the WASM back until `release` is called. */
async function holdBundle(page: Page) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await page.route('**/*.wasm', async (route) => {
    await released;
    await route.continue();
  });
  return release;
}

test('choices made before the page hydrated are the ones the hydrated page reserves with', async ({ page }) => {
  await login(page, STAFF);
  const value = (testId: string, code: string) =>
    page.getByTestId(testId).locator(`option[data-code="${code}"]`).getAttribute('value');
  const address = `/?project=${await value('select-project', 'LCBP3')}&type=${await value('select-type', 'INSTRUCTION')}`;

  const release = await holdBundle(page);
  await page.goto(address);
  const originator = page.getByTestId('select-originator');
  await originator.selectOption((await value('select-originator', 'ผรม.2'))!);
  const recipient = page.getByTestId('select-recipient');
  await recipient.selectOption((await value('select-recipient', 'กทท.'))!);
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(0);
  // the "show the parts" step is for a page without its script: shown until the script is there, then hidden
  await expect(page.getByTestId('choose-step')).toBeVisible();
  release();
  await waitHydrated(page);
  await expect(page.getByTestId('choose-step')).toBeHidden();
  await expect(originator.locator('option:checked')).toHaveAttribute('data-code', 'ผรม.2');
  await expect(recipient.locator('option:checked')).toHaveAttribute('data-code', 'กทท.');
  await page.getByTestId('reserve-button').click();
  await expect(page.getByTestId('reserved-number')).toContainText('ผรม.2');
  await expect(page.getByTestId('reserved-number')).toContainText('กทท.');
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'RESERVED');
});
