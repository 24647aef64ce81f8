import { expect, test } from '@playwright/test';
import { STAFF, login } from './helpers';

// A person on a weak mobile signal chooses and taps as soon as the form shows, before the staff script has arrived
// (held back here until the tap, as the slowest signal would): the form posts itself and the number comes back.
// Chromium's own throttling (the DevTools protocol), the 3G profile of the browsers' tools with a CPU 4× slower.
// Only this test takes numbers from LCBP3 / LETTER / กทท. → สคฉ.3.
test('a tap before the bundle has loaded is not lost (3G, CPU ×4)', async ({ page, context }) => {
  await login(page, STAFF);
  // the page's address names the project and type as the form leaves them (a person's usual choice)
  const value = (testId: string, code: string) =>
    page.getByTestId(testId).locator(`option[data-code="${code}"]`).getAttribute('value');
  const address = `/?project=${await value('select-project', 'LCBP3')}&type=${await value('select-type', 'LETTER')}`;

  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 300,
    downloadThroughput: (700 * 1000) / 8,
    uploadThroughput: (700 * 1000) / 8,
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await page.route('**/*.wasm', async (route) => {
    await released;
    await route.continue();
  });

  await page.goto(address, { waitUntil: 'commit' });
  const originator = page.getByTestId('select-originator');
  await expect(originator).toBeVisible({ timeout: 30_000 });
  await originator.selectOption({ label: await originator.locator('option[data-code="กทท."]').innerText() });
  const recipient = page.getByTestId('select-recipient');
  await recipient.selectOption({ label: await recipient.locator('option[data-code="สคฉ.3"]').innerText() });
  // the tap comes before hydration: otherwise this test shows nothing
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(0);
  await page.getByTestId('reserve-button').click();

  await expect(page.getByTestId('reserved-number')).toHaveText('กทท.-สคฉ.3-0001-2568', { timeout: 30_000 });
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'RESERVED');
  // once the script arrives, the page goes on with the same number
  release();
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(1, { timeout: 45_000 });
  await expect(page.getByTestId('reserved-number')).toHaveText('กทท.-สคฉ.3-0001-2568');
  await expect(page.getByTestId('copy-button')).toBeVisible();
});
