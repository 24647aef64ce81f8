import { defineConfig } from '@playwright/test';

// The server is started by the test harness (fresh SQLite database, demo data, clock at 2025-06-15);
// these tests only talk to it. Chromium is the system one: never `npx playwright install`.
export default defineConfig({
  testDir: './tests',
  // two instances and Redis: only scripts/e2e-live.sh runs it (it sets LIVE_TWO_INSTANCES)
  testIgnore: process.env.LIVE_TWO_INSTANCES ? [] : ['**/live.spec.ts'],
  fullyParallel: false,
  workers: 1,
  // Under CI a test that fails is run once more, and one that then passes is reported as flaky (in the list's summary)
  // rather than failing the run: three races between a test's actions and the page's own refreshes turned up in the
  // cold runs of 2026-12-03 (docs/benchmarks/ci-time.md), each in one run of several. Locally a failure fails.
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL: process.env.BASE_URL ?? 'http://127.0.0.1:3000',
    locale: 'th-TH',
    // A trace of every test, kept for a failure: 18 % of the suite's CPU. Without it the tests ran faster than the
    // page under them, and two of four cold CI runs went red on races the traces' pace had hidden
    // (docs/benchmarks/ci-time.md): it stays on until those are gone.
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
});
