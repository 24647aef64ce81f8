import { expect, test } from '@playwright/test';
import { STAFF, collectErrors, selectByCode, waitHydrated, loginLive } from './helpers';

// /blocks: numbers taken in advance from the reserve page's choices, then confirmed or cancelled one by one.
// Only this file takes numbers from LCBP3-C3 / OTHER คคง. → ผรม.1.

test('staff take a block from the reserve page and confirm and cancel its numbers one by one', async ({ page }) => {
  const errors = collectErrors(page);
  await loginLive(page, STAFF);
  await selectByCode(page, 'select-project', 'LCBP3-C3');
  await selectByCode(page, 'select-type', 'OTHER');
  await selectByCode(page, 'select-originator', 'คคง.');
  await selectByCode(page, 'select-recipient', 'ผรม.1');
  await expect(page.getByTestId('preview-number')).toBeVisible();
  const first = (await page.getByTestId('preview-number').textContent())!;

  // the same choices, on the blocks page: the block would start at the number the preview shows
  await page.getByTestId('reserve-block-link').click();
  await expect(page).toHaveURL(/\/blocks\?project=\d+&type=\d+&originator=\d+&recipient=\d+$/);
  await waitHydrated(page);
  await expect(page.getByTestId('block-first')).toHaveText(first);
  await page.getByTestId('block-count').fill('3');
  await page.getByTestId('block-holder').fill('ผรม.1 สำนักงานสนาม');
  await page.getByTestId('block-reserve').click();

  // back to the block: three numbers held, in order, from the first
  await expect(page).toHaveURL(/\/blocks\?block=[0-9a-f-]{36}$/);
  const numbers = page.getByTestId('block-number');
  await expect(numbers).toHaveCount(3);
  await expect(numbers.nth(0)).toHaveAttribute('data-number', first);
  for (const n of await numbers.all()) await expect(n).toHaveAttribute('data-status', 'RESERVED');
  const row = page.locator('[data-testid="block-row"]').first();
  await expect(row).toHaveAttribute('data-count', '3');
  await expect(row).toContainText('ผรม.1 สำนักงานสนาม');

  // the first confirmed with its document, the last cancelled; the middle one still held
  await numbers.nth(0).getByTestId('block-document-id').fill('DOC-E2E-BLOCK-1');
  await numbers.nth(0).getByTestId('block-confirm').click();
  await expect(numbers.nth(0)).toHaveAttribute('data-status', 'CONFIRMED');
  await expect(numbers.nth(0)).toContainText('DOC-E2E-BLOCK-1');
  await expect(numbers.nth(0).getByTestId('block-confirm-form')).toHaveCount(0);
  await numbers.nth(2).getByTestId('block-cancel').click();
  await expect(numbers.nth(2)).toHaveAttribute('data-status', 'CANCELLED');
  await expect(numbers.nth(1)).toHaveAttribute('data-status', 'RESERVED');
  const use = page.getByTestId('block-row').first().getByTestId('block-use').locator('span');
  await expect(use).toHaveAttribute('data-held', '1');
  await expect(use).toHaveAttribute('data-confirmed', '1');
  await expect(use).toHaveAttribute('data-cancelled', '1');
  expect(errors).toEqual([]);
});
