import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Locator,
  type Page,
} from 'playwright-core';

/** Debian's chromium (`.ci/run` installs it); CHROMIUM_PATH points at another binary. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * Headless, no sandbox (CI runs as root, where the sandbox refuses to start), and none of the
 * background traffic a fresh profile starts (updates, sync, safe browsing…): the test machine has no
 * outside network, and a browser hammering it slows everything down.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The repository's artifacts folder (gitignored): CI keeps what lands here. */
export const SCREENSHOT_DIR = path.resolve(__dirname, '../../artifacts/screenshots');

/** How long one step may wait for the page (a slow, shared CI machine). */
export const STEP_TIMEOUT_MS = 15_000;

/** The built storefront the API serves (`npm test` builds it right before jest); STOREFRONT_DIR points at another build. */
export const STOREFRONT_DIR = path.resolve(
  process.env['STOREFRONT_DIR'] || path.join(__dirname, '../../apps/web/dist'),
);

export function assertStorefrontBuilt(): void {
  if (!existsSync(path.join(STOREFRONT_DIR, 'index.html'))) {
    throw new Error(
      `No storefront build in ${STOREFRONT_DIR}: run \`npm run build -w @flash-sale/web\` before the e2e tests`,
    );
  }
}

/**
 * One Chromium for a test file; each shopper gets a fresh context (own cookies and localStorage,
 * like a separate browser). Remembers its pages so a failing step can photograph all of them.
 */
export class BrowserHarness {
  private readonly contexts = new Set<BrowserContext>();
  /** What went wrong inside the pages (script errors, failed loads), told when a scenario fails. */
  private readonly pageTrouble: string[] = [];
  /** Uncaught exceptions in the pages: a scenario that passes with one still fails. */
  private readonly pageErrors: string[] = [];

  private constructor(
    readonly browser: Browser,
    readonly baseUrl: string,
  ) {}

  static async launch(baseUrl: string): Promise<BrowserHarness> {
    if (!existsSync(CHROMIUM_PATH)) {
      throw new Error(
        `No Chromium at ${CHROMIUM_PATH}: install it (apt-get install -y --no-install-recommends chromium, as .ci/run does) or set CHROMIUM_PATH`,
      );
    }
    // Failure screenshots of an earlier run would pass for this run's.
    if (existsSync(SCREENSHOT_DIR)) {
      for (const file of readdirSync(SCREENSHOT_DIR)) {
        if (file.startsWith('FAILED-')) rmSync(path.join(SCREENSHOT_DIR, file));
      }
    }
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    return new BrowserHarness(browser, baseUrl);
  }

  /** A new browser context (a separate shopper) with one page; relative `page.goto` paths use the API's URL. */
  async newPage(options: BrowserContextOptions = {}): Promise<Page> {
    const context = await this.browser.newContext({ baseURL: this.baseUrl, ...options });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
    this.contexts.add(context);
    context.on('close', () => this.contexts.delete(context));
    const page = await context.newPage();
    page.on('pageerror', (error) => {
      const line = `uncaught error at ${page.url()}: ${error.message}`;
      this.pageErrors.push(line);
      this.pageTrouble.push(line);
    });
    page.on('requestfailed', (request) => {
      const reason = request.failure()?.errorText ?? 'failed';
      // A reload cancels what was in flight: expected, not trouble.
      if (reason !== 'net::ERR_ABORTED') this.pageTrouble.push(`${request.method()} ${request.url()}: ${reason}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 500 || (response.status() === 404 && !response.url().includes('/api/'))) {
        this.pageTrouble.push(`${response.request().method()} ${response.url()}: HTTP ${response.status()}`);
      }
    });
    return page;
  }

  /** Every page still open, for failure screenshots. */
  openPages(): Page[] {
    return [...this.contexts].flatMap((context) => context.pages());
  }

  /**
   * Runs one scenario; when it throws, saves a screenshot of every open page as
   * `FAILED-<name>-<n>.png` and adds the pages' script errors and failed loads to the error, so a
   * red CI run shows what the browser saw.
   */
  async scenario(name: string, body: () => Promise<void>): Promise<void> {
    this.pageTrouble.length = 0;
    this.pageErrors.length = 0;
    try {
      await body();
      if (this.pageErrors.length > 0) throw new Error(`The pages threw:\n  ${this.pageErrors.join('\n  ')}`);
    } catch (error) {
      const pages = this.openPages();
      await Promise.all(
        pages.map((page, index) =>
          saveScreenshot(page, `FAILED-${name}-${index + 1}`).catch(() => undefined /* the page may be gone */),
        ),
      );
      if (error instanceof Error && this.pageTrouble.length > 0 && !error.message.startsWith('The pages threw')) {
        error.message += `\n\nIn the browser meanwhile:\n  ${this.pageTrouble.join('\n  ')}`;
      }
      throw error;
    }
  }

  /** Closes the contexts a scenario opened (keeps the browser). */
  async closeContexts(): Promise<void> {
    await Promise.all([...this.contexts].map((context) => context.close()));
  }

  async close(): Promise<void> {
    await this.closeContexts();
    await this.browser.close();
  }
}

/** A full-page PNG at `artifacts/screenshots/<name>.png` (repository root); returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, timeout: STEP_TIMEOUT_MS });
  return file;
}

/** A PNG of one part of a page (a chart, a table) at `artifacts/screenshots/<name>.png`: its detail at full size. */
export async function saveElementScreenshot(element: Locator, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await element.screenshot({ path: file, timeout: STEP_TIMEOUT_MS });
  return file;
}
