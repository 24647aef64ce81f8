import { expect, test } from '@playwright/test';
import { SAME_ORIGIN, STAFF, login, selectByCode } from './helpers';

// The network edge (docs/rules/api.md#callers-and-authentication) in a real browser: the pages' Content-Security-Policy lets the app hydrate and work
// (Leptos' inline scripts carry the response's nonce) and blocks what it should.
// Only this file takes numbers from LCBP3-C2 / LETTER (สคฉ.3 → ผรม.2: no other file searches the audit for them).

test('pages carry a CSP with a nonce, and a reserve raises no CSP violation', async ({ page }) => {
  const violations: string[] = [];
  page.on('console', (msg) => {
    if (msg.text().includes('Content Security Policy')) violations.push(msg.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`));
  });

  const response = await page.goto('/login');
  const headers = response!.headers();
  const csp = headers['content-security-policy'];
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("object-src 'none'");
  expect(csp).toMatch(/script-src 'self' 'nonce-[^']+' 'wasm-unsafe-eval'/);
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('same-origin');
  // the login page is its HTML alone: nothing to load and run (its inline scripts are data, with the nonce)
  expect(await page.evaluate(() => Array.from(document.scripts).filter((s) => s.src || s.type === 'module').length)).toBe(0);

  // log in; every script of the reserve page carries its policy's nonce (the DOM hides the attribute; the property keeps it)
  await login(page, STAFF);
  const reserveCsp = (await page.request.get('/')).headers()['content-security-policy'];
  expect(reserveCsp).toMatch(/script-src 'self' 'nonce-[^']+' 'wasm-unsafe-eval'/);
  const reload = await page.reload();
  const nonce = /'nonce-([^']+)'/.exec(reload!.headers()['content-security-policy'])![1];
  const nonces = await page.evaluate(() => Array.from(document.scripts).map((s) => s.nonce));
  expect(nonces.length).toBeGreaterThan(0);
  for (const n of nonces) expect(n).toBe(nonce);

  // reserve through the form (the staff script posts it): nothing is blocked
  await selectByCode(page, 'select-project', 'LCBP3-C2');
  await selectByCode(page, 'select-type', 'LETTER');
  await selectByCode(page, 'select-originator', 'สคฉ.3');
  await selectByCode(page, 'select-recipient', 'ผรม.2');
  await expect(page.getByTestId('preview-number')).toHaveText(/^สคฉ\.3-ผรม\.2-\d{4}-2568$/);
  await page.getByTestId('reserve-button').click();
  await expect(page.getByTestId('status')).toHaveAttribute('data-status', 'RESERVED');
  await expect(page.getByTestId('reserved-number')).toHaveText(/^สคฉ\.3-ผรม\.2-\d{4}-2568$/);
  expect(violations).toEqual([]);

  // and the policy is enforced: a script injected without the nonce does not run
  const ran = await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__injected = true;';
    document.body.appendChild(s);
    return (window as unknown as { __injected?: boolean }).__injected === true;
  });
  expect(ran).toBe(false);
  await expect.poll(() => violations.length).toBeGreaterThan(0);
});

test('a state change with the session cookie from another origin is refused; from the page it works', async ({ page }) => {
  await login(page, STAFF);
  const body = { projectCode: 'LCBP3-C2', correspondenceTypeCode: 'LETTER', originatorCode: 'สคฉ.3', recipientCode: 'ผรม.2' };
  const foreign = await page.request.post('/api/v1/document-numbering/preview', { headers: { Origin: 'https://evil.example' }, data: body });
  expect(foreign.status()).toBe(403);
  expect((await foreign.json()).code).toBe('FORBIDDEN');
  const own = await page.request.post('/api/v1/document-numbering/preview', { headers: SAME_ORIGIN, data: body });
  expect(own.status()).toBe(200);
  // the page's own fetch (the browser sets Origin and Sec-Fetch-Site itself)
  const status = await page.evaluate(async (b) => {
    const r = await fetch('/api/v1/document-numbering/preview', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
    return r.status;
  }, body);
  expect(status).toBe(200);
});
