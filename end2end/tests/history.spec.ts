import { expect, test, type Page } from '@playwright/test';
import { ADMIN, login, selectByCode, waitHydrated } from './helpers';

// Runs against the shared fresh database (demo data, clock 2025-06-15 = B.E. 2568).
// Only this file uses LCBP3-C2 / INSTRUCTION and LCBP3-C3 / EMAIL.

const DEFAULT_TEMPLATE = '{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}';

async function openEditor(page: Page, project: string, type: string) {
  await page.goto('/templates');
  await waitHydrated(page);
  await selectByCode(page, 'select-project', project);
  await selectByCode(page, 'select-type', type);
  // the history of this (project, type) is loaded
  await expect(page.getByTestId('template-version-row').first()).toBeVisible();
}

async function saveTemplate(page: Page, text: string, reason: string) {
  await page.getByTestId('template-input').fill(text);
  await expect(page.getByTestId('template-valid')).toBeVisible();
  await page.getByTestId('template-reason').fill(reason);
  await page.getByTestId('template-save').click();
  await expect(page.getByTestId('template-saved')).toContainText(text);
  await expect(page.getByTestId('error')).toHaveCount(0);
}

async function versionOf(row: ReturnType<Page['getByTestId']>) {
  return Number(await row.getAttribute('data-version'));
}

test('template history: two versions with their diff, rollback to the first; a number issued before is unchanged', async ({ page }) => {
  await login(page, ADMIN);

  // a number issued with the template as it is now
  await selectByCode(page, 'select-project', 'LCBP3-C2');
  await selectByCode(page, 'select-type', 'INSTRUCTION');
  await selectByCode(page, 'select-originator', 'ผรม.1');
  await selectByCode(page, 'select-recipient', 'คคง.');
  await expect(page.getByTestId('preview-number')).toHaveText('ผรม.1-คคง.-0001-2568');
  await page.getByTestId('reserve-button').click();
  const issued = 'ผรม.1-คคง.-0001-2568';
  await expect(page.getByTestId('reserved-number')).toHaveText(issued);
  await page.getByTestId('document-id').fill('DOC-E2E-HIST-0001');
  await page.getByTestId('confirm-button').click();
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'CONFIRMED');

  // two new versions; neither changes the counter key (same parties, same yearly reset)
  await openEditor(page, 'LCBP3-C2', 'INSTRUCTION');
  await expect(page.getByTestId('template-input')).toHaveValue(DEFAULT_TEMPLATE);
  const rows = page.getByTestId('template-version-row');
  const before = await rows.count();
  const first = '{ORIGINATOR}-{RECIPIENT}-INS-{SEQ:4}-{YEAR:B.E.}';
  const second = '{ORIGINATOR}-{RECIPIENT}/{SEQ:4}/{YEAR:B.E.}';
  await saveTemplate(page, first, 'ฉบับทดสอบที่หนึ่ง');
  await expect(page.getByTestId('template-key-change')).toHaveCount(0);
  await expect(rows).toHaveCount(before + 1);
  await saveTemplate(page, second, 'ฉบับทดสอบที่สอง');
  await expect(rows).toHaveCount(before + 2);

  // newest first: the second, then the first, each with who, why and a diff
  const rowSecond = rows.nth(0);
  const rowFirst = rows.nth(1);
  await expect(rowSecond).toHaveAttribute('data-current', 'true');
  await expect(rowSecond.getByTestId('template-version-reason')).toContainText('ฉบับทดสอบที่สอง');
  await expect(rowFirst.getByTestId('template-version-reason')).toContainText('ฉบับทดสอบที่หนึ่ง');
  await expect(rowSecond.getByTestId('template-version-by')).toContainText(ADMIN.user);
  const vFirst = await versionOf(rowFirst);
  const vSecond = await versionOf(rowSecond);
  expect(vSecond).toBe(vFirst + 1);

  const diffFirst = rowFirst.getByTestId('template-diff');
  await expect(diffFirst).toHaveAttribute('data-before', DEFAULT_TEMPLATE);
  await expect(diffFirst).toHaveAttribute('data-after', first);
  await expect(diffFirst.getByTestId('template-diff-added')).toContainText('INS');
  await expect(diffFirst.getByTestId('template-diff-removed')).toHaveCount(0);
  const diffSecond = rowSecond.getByTestId('template-diff');
  await expect(diffSecond).toHaveAttribute('data-before', first);
  await expect(diffSecond).toHaveAttribute('data-after', second);
  await expect(diffSecond.getByTestId('template-diff-removed').first()).toContainText('INS');
  await expect(diffSecond.getByTestId('template-diff-added').first()).toHaveText('/');
  // the current version has no rollback button; older ones do
  await expect(rowSecond.getByTestId('template-rollback')).toHaveCount(0);
  await expect(rowFirst.getByTestId('template-rollback')).toBeVisible();

  // roll back to the first: asks for a reason, no acknowledgment (the key does not change)
  await rowFirst.getByTestId('template-rollback').click();
  const form = rowFirst.getByTestId('template-rollback-form');
  await expect(form).toBeVisible();
  await expect(form.getByTestId('template-rollback-key-change')).toHaveCount(0);
  await expect(form.getByTestId('template-rollback-confirm')).toBeDisabled();
  await form.getByTestId('template-rollback-reason').fill('ย้อนกลับไปฉบับที่หนึ่ง (ทดสอบ)');
  await form.getByTestId('template-rollback-confirm').click();

  // the editor shows the restored text as a new version, and the history has it on top
  await expect(page.getByTestId('template-input')).toHaveValue(first);
  await expect(page.getByTestId('template-origin')).toContainText(`ฉบับที่ ${vSecond + 1}`);
  await expect(page.getByTestId('template-saved')).toContainText(`${vSecond + 1}`);
  await expect(rows).toHaveCount(before + 3);
  await expect(rows.nth(0)).toHaveAttribute('data-version', String(vSecond + 1));
  await expect(rows.nth(0)).toHaveAttribute('data-current', 'true');
  await expect(rows.nth(0).getByTestId('template-version-reason')).toContainText('ย้อนกลับไปฉบับที่หนึ่ง');
  await expect(rows.nth(0).getByTestId('template-diff')).toHaveAttribute('data-before', second);
  await expect(rows.nth(0).getByTestId('template-diff')).toHaveAttribute('data-after', first);
  await expect(page.getByTestId('template-rollback-form')).toHaveCount(0);

  // the number issued before every change is still recorded exactly as it was issued
  await page.goto('/audit');
  await waitHydrated(page);
  await page.getByTestId('audit-filter-number').fill('ผรม.1-คคง.-0001');
  await page.getByTestId('audit-search').click();
  await expect(page.getByTestId('audit-total')).toHaveAttribute('data-total', '2');
  await expect(page.getByTestId('audit-row')).toHaveCount(2);
  for (const op of ['RESERVE', 'CONFIRM']) {
    const row = page.locator(`[data-testid="audit-row"][data-operation="${op}"]`);
    await expect(row).toHaveCount(1);
    await expect(row.getByTestId('audit-row-number')).toHaveText(issued);
  }
  // the rollback itself is in the audit log
  await page.getByTestId('audit-filter-number').fill('');
  await page.getByTestId('audit-filter-operation').selectOption('TEMPLATE_ROLLBACK');
  await page.getByTestId('audit-search').click();
  await expect(page.locator('[data-testid="audit-row"][data-operation="TEMPLATE_ROLLBACK"]').first()).toBeVisible();

  // and the same counter goes on with the restored template
  await page.goto('/');
  await waitHydrated(page);
  await selectByCode(page, 'select-project', 'LCBP3-C2');
  await selectByCode(page, 'select-type', 'INSTRUCTION');
  await selectByCode(page, 'select-originator', 'ผรม.1');
  await selectByCode(page, 'select-recipient', 'คคง.');
  await expect(page.getByTestId('preview-number')).toHaveText('ผรม.1-คคง.-INS-0002-2568');
});

test('a save that changes the counter key is blocked until the acknowledgment is ticked; so is such a rollback', async ({ page }) => {
  await login(page, ADMIN);
  await openEditor(page, 'LCBP3-C3', 'EMAIL');
  const input = page.getByTestId('template-input');
  await expect(input).toHaveValue(DEFAULT_TEMPLATE);
  const warning = page.getByTestId('template-key-change');
  const ack = page.getByTestId('template-ack-key-change');
  const save = page.getByTestId('template-save');
  await expect(warning).toHaveCount(0);

  // the reset scope is part of the key
  await page.getByTestId('template-reset').selectOption('NONE');
  await expect(warning).toBeVisible();
  await page.getByTestId('template-reset').selectOption('YEARLY');
  await expect(warning).toHaveCount(0);

  // dropping {RECIPIENT} merges the per-recipient counters: warned, and the save waits for the box
  const merged = '{ORIGINATOR}-{SEQ:4}-{YEAR:B.E.}';
  await input.fill(merged);
  await expect(page.getByTestId('template-valid')).toBeVisible();
  await expect(warning).toBeVisible();
  await expect(warning).toContainText('เริ่มใหม่');
  await expect(page.getByTestId('template-key-before')).toContainText('ผู้รับ');
  await expect(page.getByTestId('template-key-after')).not.toContainText('ผู้รับ');
  await page.getByTestId('template-reason').fill('รวมตัวนับของผู้รับทุกราย (ทดสอบ)');
  await expect(ack).not.toBeChecked();
  await expect(save).toBeDisabled();
  await ack.check();
  await expect(save).toBeEnabled();
  // typing on resets the acknowledgment when the key change is a different one
  await input.fill('{ORIGINATOR} {SUB_TYPE}-{SEQ:4}-{YEAR:B.E.}');
  await expect(page.getByTestId('template-key-after')).toContainText('ประเภทย่อย');
  await expect(ack).not.toBeChecked();
  await expect(save).toBeDisabled();
  await input.fill(merged);
  await ack.check();
  await save.click();
  await expect(page.getByTestId('template-saved')).toContainText(merged);
  await expect(page.getByTestId('error')).toHaveCount(0);
  // saved: the stored template is now the merged one, nothing left to acknowledge
  await expect(warning).toHaveCount(0);

  // rolling back to the default splits the counters again: the rollback asks for the acknowledgment too
  const rows = page.getByTestId('template-version-row');
  await expect(rows.nth(0).getByTestId('template-diff')).toHaveAttribute('data-after', merged);
  const previous = rows.nth(1);
  await expect(previous.getByTestId('template-diff')).toHaveAttribute('data-after', DEFAULT_TEMPLATE);
  await previous.getByTestId('template-rollback').click();
  const form = previous.getByTestId('template-rollback-form');
  await expect(form.getByTestId('template-rollback-key-change')).toBeVisible();
  await form.getByTestId('template-rollback-reason').fill('กลับไปแยกตามผู้รับ (ทดสอบ)');
  await expect(form.getByTestId('template-rollback-confirm')).toBeDisabled();
  await form.getByTestId('template-rollback-ack').check();
  await form.getByTestId('template-rollback-confirm').click();
  await expect(input).toHaveValue(DEFAULT_TEMPLATE);
  await expect(rows.nth(0)).toHaveAttribute('data-current', 'true');
  await expect(rows.nth(0).getByTestId('template-diff')).toHaveAttribute('data-after', DEFAULT_TEMPLATE);
  await expect(page.getByTestId('error')).toHaveCount(0);
});
