import { expect, test, type Page } from '@playwright/test';
import { ADMIN, STAFF, collectErrors, login, selectByCode, waitHydrated, SAME_ORIGIN, openMore } from './helpers';

// Reference-data admin (/reference). Only this file adds ผรม.8 / ผรม.9, the project E2E-REF, and makes ผรม.8
// a member of LCBP3-C4 (it takes LCBP3-C4 / LETTER numbers from ผรม.8 only).

async function openReference(page: Page, kind: string) {
  await page.goto('/reference');
  await waitHydrated(page);
  await page.getByTestId('ref-kind').selectOption(kind);
  await expect(page.getByTestId('ref-table')).toHaveAttribute('data-kind', kind);
}

function row(page: Page, code: string) {
  return page.locator(`[data-testid="ref-row"][data-code="${code}"]`);
}

test('a super admin adds and edits reference data, and the reservation form uses it at once', async ({ page }) => {
  await login(page, ADMIN);
  const errors = collectErrors(page);
  await openMore(page);
  await expect(page.getByTestId('nav-reference')).toBeVisible();
  await openReference(page, 'organizations');

  // create an organization
  await page.getByTestId('ref-code').fill('ผรม.8');
  await page.getByTestId('ref-name').fill('ผู้รับเหมา 8');
  await page.getByTestId('ref-role').selectOption('CONTRACTOR');
  await page.getByTestId('ref-save').click();
  await expect(page.getByTestId('ref-saved')).toBeVisible();
  await expect(row(page, 'ผรม.8').getByTestId('ref-row-name')).toHaveText('ผู้รับเหมา 8');
  await expect(row(page, 'ผรม.8').getByTestId('ref-row-extra')).toHaveText('CONTRACTOR');

  // edit it: the code is fixed, the name changes
  await row(page, 'ผรม.8').getByTestId('ref-edit').click();
  await expect(page.getByTestId('ref-code')).toBeDisabled();
  await expect(page.getByTestId('ref-code')).toHaveValue('ผรม.8');
  await page.getByTestId('ref-name').fill('บริษัท ผู้รับเหมา 8 จำกัด');
  await page.getByTestId('ref-save').click();
  await expect(row(page, 'ผรม.8').getByTestId('ref-row-name')).toHaveText('บริษัท ผู้รับเหมา 8 จำกัด');

  expect(errors).toEqual([]);
  // a code with a separator is refused with the rule's Thai message, answered 400 like on the REST API
  // (the browser logs the failed request once)
  await page.getByTestId('ref-new').click();
  await page.getByTestId('ref-code').fill('ผรม-8');
  await page.getByTestId('ref-name').fill('x');
  await page.getByTestId('ref-save').click();
  await expect(page.getByTestId('error')).toContainText("รหัสต้องไม่มีอักขระ '-'");
  await expect(row(page, 'ผรม-8')).toHaveCount(0);

  // make it a member of LCBP3-C4
  await page.getByTestId('ref-kind').selectOption('projects');
  await expect(page.getByTestId('ref-table')).toHaveAttribute('data-kind', 'projects');
  await row(page, 'LCBP3-C4').getByTestId('ref-edit').click();
  await expect(page.getByTestId('ref-code')).toHaveValue('LCBP3-C4');
  await page.locator('[data-testid="ref-member"][data-code="ผรม.8"]').check();
  await page.getByTestId('ref-save').click();
  await expect(page.getByTestId('ref-saved')).toBeVisible();
  await expect(row(page, 'LCBP3-C4').getByTestId('ref-row-extra2')).toContainText('ผรม.8');

  // the reservation form offers it, with its new name, and previews its first number
  await page.goto('/');
  await waitHydrated(page);
  await selectByCode(page, 'select-project', 'LCBP3-C4');
  await selectByCode(page, 'select-type', 'LETTER');
  await expect(page.locator('[data-testid="select-originator"] option[data-code="ผรม.8"]')).toHaveText('ผรม.8 — บริษัท ผู้รับเหมา 8 จำกัด');
  await selectByCode(page, 'select-originator', 'ผรม.8');
  await selectByCode(page, 'select-recipient', 'กทท.');
  await expect(page.getByTestId('preview-number')).toHaveText('ผรม.8-กทท.-0001-2568');
  expect(errors).toEqual(['console: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
});

test('a super admin imports a reference document: dry run first, then all of it', async ({ page }) => {
  await login(page, ADMIN);
  await openReference(page, 'projects');
  const doc = {
    organizations: [{ code: 'ผรม.9', name: 'ผู้รับเหมา 9', role: 'CONTRACTOR' }],
    disciplines: [{ code: 'E2E', name: 'สาขาทดสอบ' }],
    projects: [{ code: 'E2E-REF', name: 'โครงการทดสอบนำเข้า', members: ['ผรม.9', 'คคง.'] }],
  };
  await page.getByTestId('ref-import-text').fill(JSON.stringify(doc, null, 2));
  await page.getByTestId('ref-import-dry').click();
  const report = page.getByTestId('import-report');
  await expect(report).toHaveAttribute('data-state', 'dry');
  await expect(page.getByTestId('import-state')).toHaveText('ตรวจสอบเท่านั้น — ยังไม่ได้บันทึกข้อมูล');
  await expect(page.getByTestId('import-ok')).toHaveText('3');
  await expect(page.getByTestId('import-errors')).toHaveText('0');
  await expect(page.locator('[data-testid="report-row"][data-ok="true"]')).toHaveCount(3);
  await expect(row(page, 'E2E-REF')).toHaveCount(0);

  await page.getByTestId('ref-import-apply').click();
  await expect(report).toHaveAttribute('data-state', 'applied');
  await expect(page.getByTestId('import-state')).toHaveText('นำเข้าเรียบร้อยแล้ว');
  await expect(row(page, 'E2E-REF')).toHaveCount(1);
  await expect(row(page, 'E2E-REF').getByTestId('ref-row-extra2')).toHaveText('คคง., ผรม.9');

  // one bad item refuses the whole document, and the report names it
  const bad = { disciplines: [{ code: 'E2F', name: 'ok' }, { code: 'A-B', name: 'bad' }] };
  await page.getByTestId('ref-import-text').fill(JSON.stringify(bad));
  await page.getByTestId('ref-import-apply').click();
  await expect(report).toHaveAttribute('data-state', 'refused');
  const refused = page.locator('[data-testid="report-row"][data-ok="false"]');
  await expect(refused).toHaveCount(1);
  await expect(refused).toHaveAttribute('data-row', '2');
  await expect(refused.getByTestId('report-result')).toContainText("รหัสต้องไม่มีอักขระ '-'");
  await page.getByTestId('ref-kind').selectOption('disciplines');
  await expect(row(page, 'E2E')).toHaveCount(1);
  await expect(row(page, 'E2F')).toHaveCount(0);

  // the new project is offered for numbering
  await page.goto('/');
  await waitHydrated(page);
  await selectByCode(page, 'select-project', 'E2E-REF');
  await selectByCode(page, 'select-type', 'MEMO');
  await selectByCode(page, 'select-originator', 'ผรม.9');
  await selectByCode(page, 'select-recipient', 'คคง.');
  await expect(page.getByTestId('preview-number')).toHaveText('ผรม.9-คคง.-0001-2568');
});

test('staff are refused on the reference page and by the API', async ({ page }) => {
  await login(page, STAFF);
  await expect(page.getByTestId('nav-reference')).toHaveCount(0);
  await page.goto('/reference');
  await waitHydrated(page);
  await expect(page.getByTestId('error')).toHaveText('คุณไม่มีสิทธิ์ใช้หน้านี้');
  await expect(page.getByTestId('no-access-role')).toContainText('SUPER_ADMIN');
  await expect(page.getByTestId('ref-table')).toHaveCount(0);

  const create = await page.request.post('/api/v1/reference/organizations', { headers: SAME_ORIGIN, data: { code: 'ผรม.99', name: 'x', role: 'OTHER' } });
  expect(create.status()).toBe(403);
  expect((await create.json()).code).toBe('FORBIDDEN');
  const edit = await page.request.put('/api/v1/reference/projects/1', { headers: SAME_ORIGIN, data: { code: 'LCBP3', name: 'x', active: false } });
  expect(edit.status()).toBe(403);
  const imp = await page.request.post('/api/v1/reference/import?dryRun=true', { headers: SAME_ORIGIN, data: { disciplines: [{ code: 'X', name: 'x' }] } });
  expect(imp.status()).toBe(403);
  expect((await imp.json()).message).toBe('คุณไม่มีสิทธิ์ดำเนินการนี้');
  // nothing changed: LCBP3 is still active and ผรม.99 does not exist
  const projects = await (await page.request.get('/api/v1/reference/projects')).json();
  expect(projects.find((p: { code: string }) => p.code === 'LCBP3').active).toBe(true);
  const orgs = await (await page.request.get('/api/v1/reference/organizations')).json();
  expect(orgs.some((o: { code: string }) => o.code === 'ผรม.99')).toBe(false);
});
