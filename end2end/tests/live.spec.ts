import { execSync } from 'node:child_process';
import { expect, test, type Page } from '@playwright/test';
import { ADMIN, login, selectByCode, waitHydrated, loginLive } from './helpers';

// Live screens across two instances (scripts/e2e-live.sh only: the default run ignores this file). The page is on
// instance B (BASE_URL); the changes are made on instance A (BASE_URL_A) through the REST API with an API token.
// One database of this run's own: LCBP3-C2 / LETTER / คคง. → ผรม.1 is the counter.

const A = process.env.BASE_URL_A ?? '';
const TOKEN = process.env.LIVE_TOKEN ?? '';
const REST = '/api/v1/document-numbering';
const LETTER = { projectCode: 'LCBP3-C2', correspondenceTypeCode: 'LETTER', originatorCode: 'คคง.', recipientCode: 'ผรม.1' };

test.describe.configure({ mode: 'serial' });

async function reserveOnA(page: Page): Promise<{ sequence: number; documentNumber: string }> {
  const res = await page.request.post(`${A}${REST}/reserve`, { headers: { Authorization: `Bearer ${TOKEN}` }, data: LETTER });
  expect(res.status(), await res.text()).toBe(200);
  return res.json();
}

async function liveOpen(page: Page) {
  await expect(page.locator('body[data-live="open"]')).toBeAttached({ timeout: 15_000 });
}

/** The counter's row on B's /counters, filtered to it. */
async function counterRow(page: Page) {
  await page.goto('/counters');
  await waitHydrated(page);
  await selectByCode(page, 'counter-filter-project', 'LCBP3-C2');
  await selectByCode(page, 'counter-filter-type', 'LETTER');
  const row = page.getByTestId('counter-row');
  await expect(row).toHaveCount(1);
  return row;
}

test('a reserve on instance A shows on B\'s counters without a reload, also after B restarts', async ({ page }) => {
  test.skip(!A || !TOKEN, 'run by scripts/e2e-live.sh');
  await reserveOnA(page); // the counter exists
  await login(page, ADMIN);
  const row = await counterRow(page);
  await expect(row).toHaveAttribute('data-last', '1');
  await liveOpen(page);
  let navigations = 0;
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations++; });

  await reserveOnA(page);
  await expect(row).toHaveAttribute('data-last', '2');

  // B stops (SIGTERM) and starts again on the same port: the page reconnects by itself and follows again
  execSync(process.env.RESTART_B ?? 'false', { stdio: 'inherit' });
  await liveOpen(page);
  await reserveOnA(page);
  await expect(row).toHaveAttribute('data-last', '3');
  await reserveOnA(page);
  await expect(row).toHaveAttribute('data-last', '4');
  expect(navigations, 'no reload').toBe(0);
});

test('B\'s reset queue shows a request made on A', async ({ page }) => {
  test.skip(!A || !TOKEN, 'run by scripts/e2e-live.sh');
  await login(page, ADMIN);
  const row = await counterRow(page);
  const counterId = await row.getAttribute('data-counter-id');
  await page.goto('/resets');
  await waitHydrated(page);
  await liveOpen(page);
  await expect(page.locator(`[data-testid="reset-row"][data-counter-id="${counterId}"]`)).toHaveCount(0);

  // a reset request needs a person (a super admin), not a token: the session cookie is the database's, valid on A too
  const res = await page.request.post(`${A}${REST}/counters/${counterId}/reset-requests`, {
    headers: { Origin: A },
    data: { newValue: 0, reason: 'ทดสอบหน้าจอสดข้ามสองเครื่องบริการ' },
  });
  expect(res.status(), await res.text()).toBe(200);
  await expect(page.locator(`[data-testid="reset-row"][data-counter-id="${counterId}"]`)).toHaveCount(1);
});

test('B\'s reservation form marks its preview stale after a reserve on A of the same counter', async ({ page }) => {
  test.skip(!A || !TOKEN, 'run by scripts/e2e-live.sh');
  await loginLive(page, ADMIN);
  await selectByCode(page, 'select-project', 'LCBP3-C2');
  await selectByCode(page, 'select-type', 'LETTER');
  await selectByCode(page, 'select-originator', 'คคง.');
  await selectByCode(page, 'select-recipient', 'ผรม.1');
  const preview = page.getByTestId('preview-number');
  await expect(preview).toHaveText(/^คคง\.-ผรม\.1-\d{4}-2568$/);
  await liveOpen(page);
  const before = await preview.innerText();
  await expect(page.getByTestId('preview-stale')).toHaveCount(0);

  const taken = await reserveOnA(page);
  expect(taken.documentNumber).toBe(before);
  await expect(page.getByTestId('preview-stale')).toBeVisible();
  await expect(page.getByTestId('preview-stale')).toContainText('เปลี่ยนแล้ว');
  await expect(preview).toHaveText(`คคง.-ผรม.1-${String(taken.sequence + 1).padStart(4, '0')}-2568`);
});
