/**
 * One chromium per test process, shared by the browser test files that run in it (scripts/test.sh runs a
 * group of files in one process): launched on first use, closed after the process's last test. Starting
 * chromium costs a second or two of CPU, once per group instead of once per file.
 *
 * A file takes a lease and makes its contexts and pages through it; the lease's `close()` closes what it
 * made, never the browser. Contexts share nothing (cookies, storage, cache), so files stay independent.
 */
import { after } from 'node:test';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

/** Debian's chromium, headless, with nothing that reaches the network on its own. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'];

/** What a test file sees of the shared browser: `Browser`'s context and page makers, and a close of its own. */
export interface ChromiumLease {
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
  /** A page in a context of its own, closed with the page (as `Browser.newPage`). */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** Closes every context this lease made; the browser stays up for the next file. */
  close(): Promise<void>;
}

let shared: Promise<Browser> | undefined;

function browser(): Promise<Browser> {
  if (!shared) {
    const launching = chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    shared = launching;
    // A browser that failed to start, crashed or was closed is launched again by the next file that asks.
    const forget = () => {
      if (shared === launching) shared = undefined;
    };
    launching.then((b) => b.on('disconnected', forget), forget);
  }
  return shared;
}

/** Closes the shared browser; the next lease launches another. */
export async function closeSharedChromium(): Promise<void> {
  const current = shared;
  shared = undefined;
  await (await current?.catch(() => undefined))?.close();
}

// Top level: a hook of the process's root test, run once its last test is done (chromium's pipes would
// otherwise keep the process alive).
after(closeSharedChromium);

/** A lease on this process's chromium (launched now if it is not up). */
export async function sharedChromium(): Promise<ChromiumLease> {
  const b = await browser();
  const contexts = new Set<BrowserContext>();
  const newContext = async (options?: BrowserContextOptions) => {
    const context = await b.newContext(options);
    contexts.add(context);
    context.on('close', () => contexts.delete(context));
    return context;
  };
  return {
    newContext,
    async newPage(options) {
      const context = await newContext(options);
      const page = await context.newPage();
      page.on('close', () => void context.close().catch(() => undefined));
      return page;
    },
    async close() {
      await Promise.all([...contexts].map((c) => c.close().catch(() => undefined)));
    },
  };
}
