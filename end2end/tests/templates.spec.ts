import { expect, test } from '@playwright/test';
import { ADMIN, login, recordApiRequests, selectByCode, waitHydrated } from './helpers';

test('the template editor validates and previews in the browser while the admin types', async ({ page }) => {
  await login(page, ADMIN);
  await page.goto('/templates');
  await waitHydrated(page);

  await selectByCode(page, 'select-project', 'LCBP3');
  await selectByCode(page, 'select-type', 'LETTER');
  const input = page.getByTestId('template-input');
  await expect(input).toHaveValue('{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}');
  await expect(page.getByTestId('template-valid')).toBeVisible();
  const preview = page.getByTestId('template-preview');
  await expect(preview).toHaveText(/^[^-]+-[^-]+-0001-\d{4}$/);
  const letterPreview = await preview.innerText();
  await expect(page.getByTestId('template-keyparts')).toContainText('ผู้ส่ง');
  await expect(page.getByTestId('template-keyparts')).toContainText('ผู้รับ');

  // let the selection's loads finish, then watch the network while typing
  await page.waitForLoadState('networkidle');
  const requests = recordApiRequests(page);

  await input.clear();
  await input.pressSequentially('{ORIGINATOR}-{SEQ}', { delay: 15 });
  const errors = page.getByTestId('template-errors');
  await expect(errors).toBeVisible();
  await expect(errors).toContainText('{SEQ}');
  await expect(errors).toContainText('{SEQ:4}');
  await expect(page.getByTestId('template-save')).toBeDisabled();

  await input.clear();
  await input.pressSequentially('{PROJECT}/{ORIGINATOR}/{SEQ:5}/{YEAR:B.E.}', { delay: 15 });
  await expect(page.getByTestId('template-valid')).toBeVisible();
  await expect(errors).toHaveCount(0);
  await expect(preview).toHaveText(/^LCBP3\/[^/]+\/00001\/\d{4}$/);
  expect(await preview.innerText()).not.toBe(letterPreview);
  await expect(page.getByTestId('template-keyparts')).toContainText('ผู้ส่ง');
  await expect(page.getByTestId('template-keyparts')).not.toContainText('ผู้รับ');

  // a yearly reset needs the year: remove it and the validator explains why
  await input.clear();
  await input.pressSequentially('{PROJECT}/{ORIGINATOR}/{SEQ:5}', { delay: 15 });
  await expect(errors).toContainText('NONE');
  // choosing reset NONE makes it valid
  await page.getByTestId('template-reset').selectOption('NONE');
  await expect(page.getByTestId('template-valid')).toBeVisible();
  // a monthly reset needs {MONTH}
  await page.getByTestId('template-reset').selectOption('MONTHLY');
  await expect(errors).toContainText('{MONTH}');

  // an unknown and a deprecated token
  await input.clear();
  await input.pressSequentially('{ORG}-{FOO}-{SEQ:4}-{YEAR:B.E.}', { delay: 15 });
  await expect(errors).toContainText('{ORIGINATOR}');
  await expect(errors).toContainText('{FOO}');

  // the sample year is the admin's to change, still without the server
  await page.getByTestId('template-reset').selectOption('YEARLY');
  await input.clear();
  await input.pressSequentially('{ORIGINATOR}-{SEQ:4}-{YEAR:B.E.}', { delay: 15 });
  // in Thai the sample year is a B.E. year, as the numbers show it
  await expect(page.getByTestId('template-sample-year')).toHaveValue(/^25\d\d$/);
  await page.getByTestId('template-sample-year').fill('2573');
  await expect(preview).toHaveText(/-0001-2573$/);

  expect(requests, `requests while typing: ${requests.join(', ')}`).toEqual([]);
});

test('an admin saves a template with a reason; the server answers and the reservation form follows it', async ({ page }) => {
  await login(page, ADMIN);
  await page.goto('/templates');
  await waitHydrated(page);

  // LCBP3-C4 / NOTICE: no other test numbers there
  await selectByCode(page, 'select-project', 'LCBP3-C4');
  await selectByCode(page, 'select-type', 'NOTICE');
  const input = page.getByTestId('template-input');
  await expect(input).not.toHaveValue('');
  await expect(input).toBeEnabled(); // the type's template has loaded: nothing will replace what is typed
  await input.fill('{ORIGINATOR}/{RECIPIENT}/{CORR_TYPE}/{SEQ:3}/{YEAR:A.D.}');
  await expect(page.getByTestId('template-valid')).toBeVisible();
  await expect(page.getByTestId('template-save')).toBeDisabled(); // no reason yet
  await page.getByTestId('template-reason').fill('ทดสอบการบันทึกแม่แบบจาก end2end');
  await page.getByTestId('template-save').click();
  await expect(page.getByTestId('template-saved')).toBeVisible();
  await expect(page.getByTestId('error')).toHaveCount(0);
  await expect(page.getByTestId('template-origin')).toContainText('ฉบับที่');

  // the staff form reads the new template
  await page.goto('/');
  await waitHydrated(page);
  await selectByCode(page, 'select-project', 'LCBP3-C4');
  await selectByCode(page, 'select-type', 'NOTICE');
  await expect(page.getByTestId('resolved-template')).toHaveText('{ORIGINATOR}/{RECIPIENT}/{CORR_TYPE}/{SEQ:3}/{YEAR:A.D.}');
  await selectByCode(page, 'select-originator', 'ผรม.2');
  await selectByCode(page, 'select-recipient', 'คคง.');
  await expect(page.getByTestId('preview-number')).toHaveText('ผรม.2/คคง./NOTICE/001/2025');
});

test('an admin retires a template: its history stays, requests use the next template of the order', async ({ page }) => {
  await login(page, ADMIN);
  await page.goto('/templates');
  await waitHydrated(page);

  // LCBP3-C1 / EMAIL: no other test uses it
  await selectByCode(page, 'select-project', 'LCBP3-C1');
  await selectByCode(page, 'select-type', 'EMAIL');
  const input = page.getByTestId('template-input');
  await expect(input).toBeEnabled();
  const retiredText = '{ORIGINATOR}-{RECIPIENT}-EM-{SEQ:4}-{YEAR:B.E.}';
  await input.fill(retiredText);
  await page.getByTestId('template-reason').fill('แม่แบบชั่วคราวสำหรับทดสอบการเลิกใช้');
  await page.getByTestId('template-save').click();
  await expect(page.getByTestId('template-saved')).toBeVisible();

  // retire it: a reason first
  await page.getByTestId('template-retire').click();
  await expect(page.getByTestId('template-retire-confirm')).toBeDisabled();
  await page.getByTestId('template-retire-reason').fill('เลิกใช้แม่แบบชั่วคราว');
  await page.getByTestId('template-retire-confirm').click();
  const retired = page.getByTestId('template-retired');
  await expect(retired).toBeVisible();
  await expect(retired).not.toContainText(retiredText);
  await expect(page.getByTestId('template-retire')).toHaveCount(0); // nothing of its own any more
  await expect(page.getByTestId('template-origin')).not.toContainText('ฉบับที่');
  // the history is kept
  await expect(page.getByTestId('template-version-row').first()).toContainText(retiredText);

  // the staff form no longer reads it
  await page.goto('/');
  await waitHydrated(page);
  await selectByCode(page, 'select-project', 'LCBP3-C1');
  await selectByCode(page, 'select-type', 'EMAIL');
  await expect(page.getByTestId('resolved-template')).not.toHaveText(retiredText);
  await expect(page.getByTestId('resolved-template')).not.toHaveText('');
});

test('the editor is locked while the chosen project\'s templates load, so a late answer never replaces what was typed', async ({ page }) => {
  await login(page, ADMIN);
  await page.goto('/templates');
  await waitHydrated(page);
  await selectByCode(page, 'select-type', 'MOM');
  const input = page.getByTestId('template-input');
  await expect(input).toBeEnabled();
  // the next project's templates come late (a slow network): what the editor shows until then is the other project's
  let release!: () => void;
  const answered = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/sfn/list_templates**', async (route) => {
    await answered;
    await route.continue();
  });
  await selectByCode(page, 'select-project', 'LCBP3-C4');
  await expect(input).toBeDisabled();
  await expect(page.getByTestId('template-reset')).toBeDisabled();
  release();
  await expect(input).toBeEnabled();
  expect(await input.inputValue()).not.toBe('');
  await input.fill('{ORIGINATOR}/{SEQ:4}/{YEAR:B.E.}');
  await page.waitForLoadState('networkidle');
  await expect(input).toHaveValue('{ORIGINATOR}/{SEQ:4}/{YEAR:B.E.}');
});

test('API tokens: create shows the secret once, revoke marks it revoked', async ({ page }) => {
  await login(page, ADMIN);
  await page.goto('/tokens');
  await waitHydrated(page);
  const name = `e2e-token-${Date.now()}`;
  await page.getByTestId('token-name').fill(name);
  await page.locator('[data-testid="token-project"][data-code="LCBP3"]').check();
  await page.getByTestId('token-create').click();
  await expect(page.getByTestId('token-secret')).toBeVisible();
  expect((await page.getByTestId('token-secret').innerText()).trim().length).toBeGreaterThan(16);

  const row = page.getByTestId('token-row').filter({ hasText: name });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('LCBP3');
  // created in Thailand time, Buddhist Era, as every other time on the pages (the service clock starts at 10:00 there)
  await expect(row.getByTestId('token-created-at')).toHaveText(/^15\/06\/2568 1\d:\d\d:\d\d · admin$/);
  await row.getByTestId('token-revoke').click();
  await expect(row.getByTestId('token-state')).toHaveText('ถูกเพิกถอน');
  await expect(row.getByTestId('token-revoke')).toHaveCount(0);

  // the secret is not shown again after a reload
  await page.reload();
  await waitHydrated(page);
  await expect(page.getByTestId('token-secret')).toHaveCount(0);
});
