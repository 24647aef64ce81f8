import { expect, test, type Page } from '@playwright/test';
import { ADMIN, STAFF, collectErrors, login, selectByCode, waitHydrated, SAME_ORIGIN, openMore } from './helpers';

// Bulk import (/import). Only this file takes numbers from LCBP3-C3 / LETTER and MEMO กทท. → คคง.

async function openImport(page: Page) {
  await page.goto('/import');
  await waitHydrated(page);
  await expect(page.getByTestId('import-text')).toBeVisible();
}

async function preview(page: Page, type: string) {
  await page.goto('/');
  await waitHydrated(page);
  await selectByCode(page, 'select-project', 'LCBP3-C3');
  await selectByCode(page, 'select-type', type);
  await selectByCode(page, 'select-originator', 'กทท.');
  await selectByCode(page, 'select-recipient', 'คคง.');
  return page.getByTestId('preview-number');
}

test('a super admin checks a bulk import with a dry run, applies it, and the numbers show up', async ({ page }) => {
  await login(page, ADMIN);
  const errors = collectErrors(page);
  await openMore(page);
  await expect(page.getByTestId('nav-import')).toBeVisible();
  await openImport(page);
  const rows = [
    { projectCode: 'LCBP3-C3', correspondenceTypeCode: 'LETTER', documentNumber: 'กทท.-คคง.-0005-2568', documentId: 'E2E-OLD-5' },
    { projectCode: 'LCBP3-C3', correspondenceTypeCode: 'LETTER', documentNumber: 'กทท.-คคง.-0009-2568', documentId: 'E2E-OLD-9' },
    { projectCode: 'LCBP3-C3', correspondenceTypeCode: 'MEMO', originatorCode: 'กทท.', recipientCode: 'คคง.', year: 2568, value: 30 },
  ];
  await page.getByTestId('import-text').fill(JSON.stringify(rows, null, 2));
  await page.getByTestId('import-reason').fill('ย้ายเลขที่จากสมุดทะเบียนเดิม');

  await page.getByTestId('import-dry').click();
  const report = page.getByTestId('import-report');
  await expect(report).toHaveAttribute('data-state', 'dry');
  await expect(page.getByTestId('import-state')).toHaveText('ตรวจสอบเท่านั้น — ยังไม่ได้บันทึกข้อมูล');
  await expect(page.getByTestId('import-total')).toHaveText('3');
  await expect(page.getByTestId('import-ok')).toHaveText('3');
  await expect(page.getByTestId('report-last')).toHaveText(['5', '9', '30']);
  await expect(page.getByTestId('report-result')).toHaveText(['ถูกต้อง', 'ถูกต้อง', 'ถูกต้อง']);

  // the dry run changed nothing
  const before = await page.request.post('/api/v1/document-numbering/preview', {
    headers: SAME_ORIGIN,
    data: { projectCode: 'LCBP3-C3', correspondenceTypeCode: 'LETTER', originatorCode: 'กทท.', recipientCode: 'คคง.' },
  });
  expect((await before.json()).documentNumber).toBe('กทท.-คคง.-0001-2568');

  await page.getByTestId('import-apply').click();
  await expect(report).toHaveAttribute('data-state', 'applied');
  await expect(page.getByTestId('import-state')).toHaveText('นำเข้าเรียบร้อยแล้ว');

  // numbering continues after the imported values
  await expect(await preview(page, 'LETTER')).toHaveText('กทท.-คคง.-0010-2568');
  await expect(await preview(page, 'MEMO')).toHaveText('กทท.-คคง.-0031-2568');

  // the imported numbers are on their counter, confirmed, with their documents
  const projects = await (await page.request.get('/api/v1/reference/projects')).json();
  const projectId = projects.find((p: { code: string }) => p.code === 'LCBP3-C3').id;
  const counters = await (await page.request.get(`/api/v1/document-numbering/counters?projectId=${projectId}`)).json();
  const letter = counters.find(
    (c: { correspondenceTypeCode: string; originatorCode: string; lastNumber: number }) =>
      c.correspondenceTypeCode === 'LETTER' && c.originatorCode === 'กทท.',
  );
  expect(letter.lastNumber).toBe(9);
  const numbers = await (await page.request.get(`/api/v1/document-numbering/counters/${letter.id}/numbers`)).json();
  const issued = numbers.numbers.map((n: { documentNumber: string; status: string; documentId: string }) => [n.documentNumber, n.status, n.documentId]);
  expect(issued).toEqual([
    ['กทท.-คคง.-0005-2568', 'CONFIRMED', 'E2E-OLD-5'],
    ['กทท.-คคง.-0009-2568', 'CONFIRMED', 'E2E-OLD-9'],
  ]);
  // every sequence passed over is explained by the import's audit row
  expect(numbers.gaps.map((g: { sequence: number; explanation: { operation: string } }) => [g.sequence, g.explanation.operation])).toEqual(
    [1, 2, 3, 4, 6, 7, 8].map((s) => [s, 'MANUAL_OVERRIDE']),
  );
  expect(errors).toEqual([]);
});

test('a file with one bad row is refused as a whole and the row is named', async ({ page }) => {
  await login(page, ADMIN);
  await openImport(page);
  const csv = [
    'projectCode,correspondenceTypeCode,documentNumber,documentId',
    'LCBP3-C3,LETTER,กทท.-คคง.-0012-2568,E2E-OLD-12',
    'NOPE,LETTER,กทท.-คคง.-0013-2568,E2E-OLD-13',
  ].join('\n');
  await page.getByTestId('import-file').setInputFiles({ name: 'legacy.csv', mimeType: 'text/csv', buffer: Buffer.from(csv, 'utf-8') });
  await expect(page.getByTestId('import-format')).toHaveValue('csv');
  await expect(page.getByTestId('import-text')).toHaveValue(csv);

  await page.getByTestId('import-dry').click();
  const report = page.getByTestId('import-report');
  await expect(report).toHaveAttribute('data-state', 'dry');
  await expect(page.getByTestId('import-ok')).toHaveText('1');
  await expect(page.getByTestId('import-errors')).toHaveText('1');

  await page.getByTestId('import-apply').click();
  await expect(report).toHaveAttribute('data-state', 'refused');
  await expect(page.getByTestId('import-state')).toHaveText('ไม่ได้นำเข้า: มีแถวที่ไม่ถูกต้อง จึงไม่ได้บันทึกข้อมูลใดเลย');
  const bad = page.locator('[data-testid="report-row"][data-ok="false"]');
  await expect(bad).toHaveAttribute('data-row', '2');
  await expect(bad.getByTestId('report-result')).toHaveText("ไม่พบข้อมูล: โครงการ 'NOPE' (projectId หรือ projectCode)");

  // the good row was not applied either
  await expect(await preview(page, 'LETTER')).toHaveText('กทท.-คคง.-0010-2568');

  // malformed JSON is refused before any row is read
  await openImport(page);
  await page.getByTestId('import-text').fill('[{"projectCode": ');
  await page.getByTestId('import-dry').click();
  await expect(page.getByTestId('error')).toContainText('รูปแบบ JSON ไม่ถูกต้อง');
  await expect(page.getByTestId('import-report')).toHaveCount(0);
});

test('staff are refused on the import page and by the API', async ({ page }) => {
  await login(page, STAFF);
  await expect(page.getByTestId('nav-import')).toHaveCount(0);
  await page.goto('/import');
  await waitHydrated(page);
  await expect(page.getByTestId('error')).toHaveText('คุณไม่มีสิทธิ์ใช้หน้านี้');
  await expect(page.getByTestId('import-text')).toHaveCount(0);

  const rows = [{ projectCode: 'LCBP3-C3', correspondenceTypeCode: 'LETTER', documentNumber: 'กทท.-คคง.-0020-2568' }];
  for (const path of ['/api/v1/document-numbering/import?dryRun=true', '/api/v1/document-numbering/import']) {
    const r = await page.request.post(path, { headers: SAME_ORIGIN, data: rows });
    expect(r.status()).toBe(403);
    const body = await r.json();
    expect(body.code).toBe('NB007');
    expect(body.message).toBe('ไม่อนุญาตให้กำหนดเลขที่เอง');
  }
  const csv = await page.request.post('/api/v1/document-numbering/import', {
    headers: { ...SAME_ORIGIN, 'content-type': 'text/csv' },
    data: 'projectCode,correspondenceTypeCode,documentNumber\nLCBP3-C3,LETTER,กทท.-คคง.-0020-2568\n',
  });
  expect(csv.status()).toBe(403);
  // nothing was imported
  const preview = await page.request.post('/api/v1/document-numbering/preview', {
    headers: SAME_ORIGIN,
    data: { projectCode: 'LCBP3-C3', correspondenceTypeCode: 'LETTER', originatorCode: 'กทท.', recipientCode: 'คคง.' },
  });
  expect((await preview.json()).documentNumber).toMatch(/^กทท\.-คคง\.-00(01|10)-2568$/);
});
