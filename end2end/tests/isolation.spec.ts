import { expect, test, type Page } from '@playwright/test';
import { ADMIN, collectErrors, login, waitHydrated } from './helpers';

// Project isolation (docs/rules/api.md#access-and-project-isolation): a project admin of LCBP3 sees none of LCBP3-C1's audit or error rows,
// on the pages (server functions) and through the CSV link and the REST API with the same session.
// Runs against the shared fresh database. Only this file takes numbers from LCBP3 / RFA and LCBP3-C1 / RFA with
// ผรม.1 GEO SHD, and creates users named `padmin-l3-…`.

const REST = '/api/v1/document-numbering';
// state changes made with a session carry the app's own origin, as its pages do
const ORIGIN = new URL(process.env.BASE_URL ?? 'http://127.0.0.1:3000').origin;

const rfa = (projectCode: string) => ({
  projectCode,
  correspondenceTypeCode: 'RFA',
  originatorCode: 'ผรม.1',
  disciplineCode: 'GEO',
  rfaTypeCode: 'SHD',
});

async function visit(page: Page, path: string) {
  await page.goto(path);
  await waitHydrated(page);
}

test('a project admin of LCBP3 sees none of the audit or error rows of LCBP3-C1 on /audit, /errors and their CSV', async ({
  page,
  browser,
}) => {
  await login(page, ADMIN);
  const post = (path: string, data: unknown) => page.request.post(path, { data, headers: { Origin: ORIGIN } });

  // a number in each project (RFA numbers show their project's code); C1's confirmed
  const own = await post(`${REST}/reserve`, rfa('LCBP3'));
  expect(own.status(), await own.text()).toBe(200);
  const ownNumber: string = (await own.json()).documentNumber;
  const other = await post(`${REST}/reserve`, rfa('LCBP3-C1'));
  expect(other.status(), await other.text()).toBe(200);
  const otherReservation = await other.json();
  const otherNumber: string = otherReservation.documentNumber;
  expect(ownNumber).toMatch(/^LCBP3-RFA-/);
  expect(otherNumber).toMatch(/^LCBP3-C1-RFA-/);
  const confirmed = await post(`${REST}/confirm`, { token: otherReservation.token, documentId: 'ISO-C1-DOC' });
  expect(confirmed.status(), await confirmed.text()).toBe(200);

  // a validation error in each project, told apart by a marker in the discipline code
  const stamp = Date.now();
  const markers = { own: `ISO-L3-${stamp}`, other: `ISO-C1-${stamp}` };
  for (const [project, marker] of [
    ['LCBP3', markers.own],
    ['LCBP3-C1', markers.other],
  ]) {
    const bad = await post(`${REST}/reserve`, { ...rfa(project), disciplineCode: marker });
    // an unknown discipline is not found (404), and logged as the caller's mistake
    expect(bad.status()).toBe(404);
  }
  // the error log is written off the request path: wait until the super admin sees both
  await expect
    .poll(async () => JSON.stringify(await (await page.request.get(`${REST}/logs/errors?errorType=VALIDATION_ERROR&pageSize=500`)).json()))
    .toContain(markers.other);
  expect(JSON.stringify(await (await page.request.get(`${REST}/logs/errors?errorType=VALIDATION_ERROR&pageSize=500`)).json())).toContain(
    markers.own,
  );

  // a project admin of LCBP3, created through the API
  const projects: { id: number; code: string }[] = await (await page.request.get('/api/v1/reference/projects')).json();
  const lcbp3 = projects.find((p) => p.code === 'LCBP3')!.id;
  const c1 = projects.find((p) => p.code === 'LCBP3-C1')!.id;
  const who = { user: `padmin-l3-${stamp}`, password: 'e2e-padmin-l3-pass' };
  const created = await post('/api/v1/admin/users', {
    username: who.user,
    password: who.password,
    role: 'PROJECT_ADMIN',
    adminProjectIds: [lcbp3],
  });
  expect(created.status(), await created.text()).toBe(200);

  const context = await browser.newContext();
  const pa = await context.newPage();
  const errors = collectErrors(pa);
  await login(pa, who);

  // /audit: LCBP3's reservation is there, nothing of C1
  await visit(pa, '/audit');
  const rows = pa.getByTestId('audit-row');
  await expect(rows.filter({ hasText: ownNumber })).toHaveCount(1);
  await expect(pa.getByTestId('audit-table')).not.toContainText('LCBP3-C1');
  await expect(rows.filter({ hasText: otherNumber })).toHaveCount(0);
  // the project filter offers their project only
  const projectFilter = pa.getByTestId('audit-filter-project');
  await expect(projectFilter.locator('option[data-code="LCBP3"]')).toHaveCount(1);
  await expect(projectFilter.locator('option[data-code="LCBP3-C1"]')).toHaveCount(0);
  // looking for C1's number, or its confirmation, finds nothing
  await pa.getByTestId('audit-filter-number').fill(otherNumber);
  await pa.getByTestId('audit-search').click();
  await expect(pa.getByTestId('audit-total')).toHaveAttribute('data-total', '0');
  await expect(pa.getByTestId('audit-empty')).toBeVisible();

  // the CSV link of an unfiltered search, fetched with the page's cookies
  await visit(pa, '/audit');
  await expect(rows.filter({ hasText: ownNumber })).toHaveCount(1);
  const href = (await pa.getByTestId('audit-csv').getAttribute('href'))!;
  const csv = await pa.request.get(href);
  expect(csv.status()).toBe(200);
  const text = await csv.text();
  expect(text).toContain(ownNumber);
  expect(text).not.toContain('LCBP3-C1');
  expect(text).not.toContain('ISO-C1-DOC');
  // the REST API with the same session: a C1 filter is refused
  expect((await pa.request.get(`${REST}/logs/audit?projectId=${c1}`)).status()).toBe(403);
  expect((await pa.request.get(`${REST}/logs/audit?projectId=${c1}&format=csv`)).status()).toBe(403);

  // /errors: their project's error, not C1's
  await visit(pa, '/errors');
  const errorRows = pa.getByTestId('error-row');
  await expect(errorRows.filter({ hasText: markers.own })).toHaveCount(1);
  await expect(errorRows.filter({ hasText: markers.other })).toHaveCount(0);
  await expect(pa.getByTestId('error-table')).not.toContainText('LCBP3-C1');
  const restErrors = JSON.stringify(await (await pa.request.get(`${REST}/logs/errors?pageSize=500`)).json());
  expect(restErrors).toContain(markers.own);
  expect(restErrors).not.toContain(markers.other);

  expect(errors).toEqual([]);
  await context.close();
});
