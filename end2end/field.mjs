// The reserve page on a phone on a slow network (scripts/field.sh): Chromium through the DevTools protocol, a
// 390 × 844 phone, the throttling profiles of the browsers' tools and Lighthouse, a CPU 4× slower, a cold cache,
// logged in first. Two loads per run, each from a cold cache:
//  - "look": the page loads and hydrates; when the HTML has arrived, when the form shows (first contentful paint),
//    when it hydrates (the page's own `data-hydrated-at`), and the bytes received (all, and the WASM's);
//  - "tap": a person chooses and taps as soon as the form shows; when the number is on the screen, and the bytes.
// Prints a Markdown table of the medians of RUNS runs. Usage: node field.mjs BASE_URL USER PASSWORD [RUNS]
import { chromium } from '@playwright/test';

const [base, user, password, runsArg] = process.argv.slice(2);
const RUNS = Number(runsArg ?? 5);
const PROFILES = [
  // Chromium DevTools' "Slow 4G" (Lighthouse's mobile throttling): 150 ms, 1.6 Mbit/s down, 750 kbit/s up
  { name: 'slow 4G', latency: 150, down: 1.6e6, up: 750e3, target: 2.5 },
  // DevTools' "3G": 300 ms, 700 kbit/s both ways
  { name: '3G', latency: 300, down: 700e3, up: 700e3, target: 5 },
];
const CHOICE = { project: 'LCBP3', type: 'LETTER', originator: 'ผรม.1', recipient: 'ผรม.2' };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function phone(browser) {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 3,
    isMobile: true,
    hasTouch: true,
    locale: 'th-TH',
    baseURL: base,
  });
  const page = await context.newPage();
  await page.goto('/login');
  await page.getByTestId('login-username').fill(user);
  await page.getByTestId('login-password').fill(password);
  await page.getByTestId('login-submit').click();
  // hydrated or not, the reserve page's form follows the login
  await page.waitForURL((u) => u.pathname === '/', { waitUntil: 'commit' });
  await page.getByTestId('reserve-form').waitFor({ timeout: 30_000 });
  const value = (testId, code) => page.getByTestId(testId).locator(`option[data-code="${code}"]`).getAttribute('value');
  const address = `/?project=${await value('select-project', CHOICE.project)}&type=${await value('select-type', CHOICE.type)}`;
  return { context, page, address };
}

/** Throttles the page as the profile says, empties the cache, and counts the bytes received from now on. */
async function throttle(context, page, profile) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.clearBrowserCache');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: profile.latency,
    downloadThroughput: profile.down / 8,
    uploadThroughput: profile.up / 8,
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  const bytes = { all: 0, wasm: 0 };
  const urls = new Map();
  cdp.on('Network.responseReceived', (e) => urls.set(e.requestId, e.response.url));
  cdp.on('Network.loadingFinished', (e) => {
    bytes.all += e.encodedDataLength;
    if ((urls.get(e.requestId) ?? '').endsWith('.wasm')) bytes.wasm += e.encodedDataLength;
  });
  return bytes;
}

async function look(browser, profile) {
  const { context, page, address } = await phone(browser);
  const bytes = await throttle(context, page, profile);
  await page.goto(address, { waitUntil: 'commit' });
  await page.getByTestId('reserve-button').waitFor({ state: 'visible', timeout: 120_000 });
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 120_000 });
  await page.waitForLoadState('load');
  const t = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const fcp = performance.getEntriesByName('first-contentful-paint')[0];
    return { html: nav.responseEnd, visible: fcp ? fcp.startTime : NaN, hydrated: Number(document.body.dataset.hydratedAt) };
  });
  await context.close();
  return { ...t, bytes: bytes.all, wasm: bytes.wasm };
}

async function tap(browser, profile) {
  const { context, page, address } = await phone(browser);
  const bytes = await throttle(context, page, profile);
  const started = Date.now();
  await page.goto(address, { waitUntil: 'commit' });
  const originator = page.getByTestId('select-originator');
  await originator.waitFor({ state: 'visible', timeout: 120_000 });
  await originator.selectOption(await originator.locator(`option[data-code="${CHOICE.originator}"]`).getAttribute('value'));
  const recipient = page.getByTestId('select-recipient');
  await recipient.selectOption(await recipient.locator(`option[data-code="${CHOICE.recipient}"]`).getAttribute('value'));
  const hydratedAtTap = (await page.locator('body[data-hydrated="true"]').count()) > 0;
  await page.getByTestId('reserve-button').click();
  await page.getByTestId('reserved-number').waitFor({ state: 'visible', timeout: 120_000 });
  const shown = Date.now() - started;
  await context.close();
  return { shown, bytes: bytes.all, hydratedAtTap };
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
const kb = (b) => `${Math.round(b / 1000)} KB`;
console.log(`| profile | HTML | form visible | hydrated | number shown (tap at once) | target | received: page (WASM) | received: tap flow | runs |`);
console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- |`);
let missed = false;
for (const profile of PROFILES) {
  const looks = [];
  const taps = [];
  for (let i = 0; i < RUNS; i++) {
    looks.push(await look(browser, profile));
    taps.push(await tap(browser, profile));
  }
  const shown = median(taps.map((t) => t.shown));
  const before = taps.filter((t) => !t.hydratedAtTap).length;
  if (shown > profile.target * 1000) missed = true;
  console.log(
    `| ${profile.name} | ${s(median(looks.map((l) => l.html)))} | ${s(median(looks.map((l) => l.visible)))} | ` +
      `${s(median(looks.map((l) => l.hydrated)))} | **${s(shown)}** (${before}/${RUNS} taps before hydration) | ≤ ${profile.target} s | ` +
      `${kb(median(looks.map((l) => l.bytes)))} (${kb(median(looks.map((l) => l.wasm)))}) | ${kb(median(taps.map((t) => t.bytes)))} | ${RUNS} |`,
  );
}
await browser.close();
process.exit(missed ? 1 : 0);
