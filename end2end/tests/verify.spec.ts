import { expect, test } from '@playwright/test';
import { ADMIN, SAME_ORIGIN, collectErrors, login, selectByCode, waitHydrated, loginLive } from './helpers';

// /verify: anyone checks a number's receipt in the browser, against the log key the page pins.
// Only this file takes numbers from LCBP3-C2 / NOTICE คคง. → ผรม.1 (charts.spec.ts counts LCBP3-C2 / OTHER's).
const REST = '/api/v1/document-numbering';
// DOC_SCREENSHOTS=../docs/screenshots saves the pictures of /verify and the stamp that the docs show;
// without it they go to the test's own output directory
const shot = (name: string) => (process.env.DOC_SCREENSHOTS ? `${process.env.DOC_SCREENSHOTS}/${name}` : test.info().outputPath(name));

test('a receipt verifies in the browser; one changed byte does not; the stamp prints the number', async ({ page, browser }) => {
  await login(page, ADMIN);
  const number = { projectCode: 'LCBP3-C2', correspondenceTypeCode: 'NOTICE', originatorCode: 'คคง.', recipientCode: 'ผรม.1' };
  const r = await page.request.post(`${REST}/reserve`, { headers: SAME_ORIGIN, data: number });
  expect(r.status(), await r.text()).toBe(200);
  const documentNumber: string = (await r.json()).documentNumber;
  const coords = new URLSearchParams({ projectCode: 'LCBP3-C2', correspondenceTypeCode: 'NOTICE', documentNumber }).toString();
  const receipt = await page.request.get(`${REST}/receipts?${coords}`);
  expect(receipt.status(), await receipt.text()).toBe(200);
  const text = await receipt.text();
  expect(text.startsWith('c2sp.org/tlog-proof@v1\n')).toBe(true);

  // a visitor without a session
  const visitor = await browser.newPage();
  const errors = collectErrors(visitor);
  await visitor.goto('/verify');
  await waitHydrated(visitor);
  await visitor.getByTestId('verify-receipt').fill(text);
  const result = visitor.getByTestId('verify-result');
  await expect(result).toHaveAttribute('data-valid', 'true');
  await expect(result).toContainText('ถูกต้อง / valid');
  await expect(visitor.getByTestId('verify-number')).toHaveText(documentNumber);
  await expect(visitor.getByTestId('verify-project')).toHaveText('LCBP3-C2');
  await expect(visitor.getByTestId('verify-type')).toHaveText('NOTICE');
  await expect(visitor.getByTestId('verify-event')).toHaveText('reserved');
  await visitor.screenshot({ path: shot('verify-valid.png'), fullPage: true });

  // one byte of the proof's entry changed: the inclusion proof no longer leads to the signed root
  const at = text.indexOf('extra ') + 'extra '.length + 10;
  const changed = text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
  await visitor.getByTestId('verify-receipt').fill(changed);
  await expect(result).toHaveAttribute('data-valid', 'false');
  await expect(result).toContainText('ไม่ถูกต้อง / not valid');
  await expect(visitor.getByTestId('verify-reason')).not.toBeEmpty();
  await visitor.screenshot({ path: shot('verify-invalid.png'), fullPage: true });
  expect(errors).toEqual([]);

  // by link, as a QR code carries it: the server renders the answer (no script needed)
  const byLink = await browser.newPage({ javaScriptEnabled: false });
  await byLink.goto(`/verify?${coords}`);
  await expect(byLink.getByTestId('verify-result')).toHaveAttribute('data-valid', 'true');
  await expect(byLink.getByTestId('verify-number')).toHaveText(documentNumber);

  // the stamp: an SVG with the number
  const stamp = await page.request.get(`${REST}/receipts/stamp?${coords}`);
  expect(stamp.status()).toBe(200);
  expect(stamp.headers()['content-type']).toContain('image/svg+xml');
  const svg = await stamp.text();
  expect(svg).toContain(documentNumber);
  const stampPage = await browser.newPage();
  await stampPage.setContent(`<body style="margin:0;background:#fff">${svg.replace(/^<\?xml[^>]*>/, '')}</body>`);
  await stampPage.locator('svg').first().screenshot({ path: shot('stamp.png') });
});

test('the reservation card shows the QR code of the verify link and links the stamp', async ({ page }) => {
  await loginLive(page, ADMIN);
  await selectByCode(page, 'select-project', 'LCBP3-C2');
  await selectByCode(page, 'select-type', 'NOTICE');
  await selectByCode(page, 'select-originator', 'คคง.');
  await selectByCode(page, 'select-recipient', 'ผรม.1');
  await page.getByTestId('reserve-button').click();
  const number = await page.getByTestId('reserved-number').textContent();
  const qr = page.getByTestId('receipt-qr');
  await expect(qr).toBeVisible();
  // the image loaded: the service drew it
  await expect.poll(() => qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  const stamp = await page.request.get((await page.getByTestId('receipt-stamp').getAttribute('href'))!);
  expect(stamp.status()).toBe(200);
  expect(await stamp.text()).toContain(number!);
});
