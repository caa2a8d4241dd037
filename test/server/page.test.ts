import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { statusPage } from '../../src/server/page.js';
import { haveJournalTools } from '../support/journal.js';
import { load, statusRig, until, type StatusRig } from '../status/rig.js';

/** Where Debian's `chromium` package puts the browser (CI installs it). */
const chromiumPath = '/usr/bin/chromium';
const haveChromium = existsSync(chromiumPath);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function rig(options: Parameters<typeof statusRig>[0] = {}): Promise<StatusRig> {
  const r = await statusRig(options);
  cleanups.push(() => r.close());
  return r;
}

const hashOf = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

describe('the status page (GET /)', () => {
  it('is self-contained: inline style and script admitted by hash, nothing from another origin', () => {
    const { html, contentSecurityPolicy: csp } = statusPage();
    const script = /<script>([\s\S]*)<\/script>/.exec(html)?.[1] ?? '';
    const style = /<style>([\s\S]*)<\/style>/.exec(html)?.[1] ?? '';
    expect(script.length).toBeGreaterThan(1000);
    expect(style.length).toBeGreaterThan(500);
    expect(csp).toContain(`script-src ${hashOf(script)}`);
    expect(csp).toContain(`style-src ${hashOf(style)}`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    // No external assets: no URL with a scheme or a protocol-relative one, no imports or fonts.
    expect(html).not.toMatch(/(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
    expect(html).not.toMatch(/@import|@font-face|url\(/i);
    // Exactly one inline script and one style, and no inline event handlers or style attributes.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html.match(/<style/g)).toHaveLength(1);
    const markup = html.replace(/<script>[\s\S]*<\/script>/, '').replace(/<style>[\s\S]*<\/style>/, '');
    expect(markup).not.toMatch(/\son[a-z]+\s*=|\sstyle\s*=/i);
    // The inline script cannot end early: no closing tag inside it.
    expect(script).not.toMatch(/<\/script/i);
    // Daemon data only ever goes in as text.
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it.runIf(haveJournalTools)('is served with its Content-Security-Policy and holds no target data', async () => {
    const r = await rig({ gpus: false });
    const { cause, lines } = load.crash(' <script>alert(1)</script>');
    r.append([...load.weights, ...lines]);
    await until('crash', async () => ((await r.target())['crash'] !== null ? true : undefined));
    const res = await fetch(`${r.daemon.address}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(statusPage().contentSecurityPolicy);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toBe(statusPage().html);
    expect(html).not.toContain(cause.slice(-40));
  });
});

describe.runIf(haveJournalTools && haveChromium)('the status page in headless Chromium', () => {
  async function browser(): Promise<Browser> {
    const b = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    cleanups.push(() => b.close());
    return b;
  }

  it('follows a load live without reloading: phase, timeline, progress, GPUs, then the crash cause, escaped', async () => {
    const r = await rig({ startedAt: Date.now() - 60_000 });
    r.append(load.weights, Date.now() - 30_000);
    r.append([load.shards(16)]);
    await until('loading with 8 GPUs', async () => {
      const t = await r.target();
      return t['phase'] === 'loading_weights' && (t['gpus'] as unknown[]).length === 8 ? true : undefined;
    });
    const page = await (await browser()).newPage({ viewport: { width: 1280, height: 800 } });
    // A page whose script does not run fails in seconds, not after Playwright's 30 s waits.
    page.setDefaultTimeout(3000);
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });
    await page.goto(`${r.daemon.address}/`);
    const card = page.locator('[data-target="kimi"]');
    const phase = card.locator('[data-field="phase"]');
    const segments = card.locator('[data-field="timeline"] .seg');
    const phasesOf = async (): Promise<(string | null)[]> => Promise.all(Array.from({ length: await segments.count() }, (_, i) => segments.nth(i).getAttribute('data-phase')));
    await expectText(() => phase.textContent(), 'loading_weights');
    expect(await phasesOf()).toEqual(['starting', 'loading_weights']);
    expect(await segments.last().getAttribute('class')).toContain('current');
    await expectText(() => card.locator('.panel').filter({ hasText: 'GPU memory' }).locator('.row').count(), 8);
    expect(await card.textContent()).toContain('16/64');
    await page.evaluate(() => { (globalThis as unknown as { mark: string }).mark = 'same document'; });

    // The current phase grows with time, between events.
    const width = async (): Promise<number> => Number(/width:\s*([\d.]+)%/.exec((await segments.last().getAttribute('style')) ?? '')?.[1] ?? 0);
    const before = await width();
    expect(before).toBeGreaterThan(30);
    await until('the current segment to grow', async () => ((await width()) > before + 0.5 ? true : undefined), 10_000);

    r.append([load.shards(64), ...load.compile]);
    await expectText(() => phase.textContent(), 'compiling');
    expect(await phasesOf()).toEqual(['starting', 'loading_weights', 'compiling']);
    expect(await card.textContent()).toContain('64/64');
    const shot = join(mkdtempSync(join(tmpdir(), 'mw-page-')), 'status-page.png');
    await page.screenshot({ path: shot });
    const png = readFileSync(shot);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.readUInt32BE(16)).toBe(1280);
    expect(png.readUInt32BE(20)).toBe(800);

    // A hostile root-cause line is shown as text, never run or parsed.
    const { cause, lines } = load.crash(' <img src=x onerror="window.pwned=1"><b>bold</b>');
    r.append(lines);
    const crash = card.locator('[data-field="crash"]');
    await expectText(async () => (await crash.count()) > 0 && (await crash.locator('h4').textContent()), 'Crashed: version_mismatch');
    expect(await crash.locator('pre.line').first().textContent()).toBe(cause);
    expect(await crash.textContent()).toContain('Installed packages disagree');
    expect(await phase.textContent()).toBe('crashed');
    expect((await phasesOf()).at(-1)).toBe('crashed');
    expect(await page.locator('main img, main b:text("bold")').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('#events').textContent()).toContain('compiling → crashed');

    expect(await page.evaluate(() => (globalThis as unknown as { mark?: string }).mark)).toBe('same document');
    expect(navigations).toBe(1);
    expect(await page.locator('#conn').textContent()).toBe('live');
    expect(problems).toEqual([]);
  }, 60_000);
});

describe.runIf(haveJournalTools && haveChromium)('the status page in headless Chromium: the new state', () => {
  it('says an attempt was first seen already loading and what last moved; flags health lost after ready, then its return', async () => {
    // A plain log file followed from its end: the load is first seen mid-way, its start unseen.
    const r = await rig({ logs: 'file', gpus: false });
    const b = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    cleanups.push(() => b.close());
    const page = await b.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(3000);
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(`${r.daemon.address}/`);
    await expectText(() => page.locator('#conn').textContent(), 'live');
    r.append([...load.weights, load.shards(16)]);
    const card = page.locator('[data-target="kimi"]');
    const phase = card.locator('[data-field="phase"]');
    await expectText(() => phase.textContent(), 'loading_weights');
    await expectText(() => card.locator('[data-field="start-not-seen"]').textContent(), 'first seen already loading (start not seen: not learned from)');
    expect(await card.locator('[data-field="last-progress"]').textContent()).toMatch(/^Last progress \d+s ago: a log line$/);

    r.append([load.shards(64), ...load.compile, ...load.warmup, ...load.ready]);
    await r.sim.setMode('ready');
    const gate = card.locator('[data-field="gate"]');
    await expectText(async () => (await gate.locator('b').textContent()), 'open');
    expect(await card.locator('[data-field="last-progress"]').count()).toBe(0);
    expect(await card.locator('.flag').allTextContents()).toEqual(['READY TO SERVE']);

    // The server stops answering: health is lost after ready, the gate closes, nothing crashed.
    await r.sim.setMode('loading');
    const lost = card.locator('[data-field="unhealthy"]');
    await expectText(async () => (await lost.count()) > 0 && (await lost.locator('h4').textContent()), 'Unhealthy: health lost after ready, the gate is closed');
    expect(await lost.textContent()).toMatch(/lost \d+s ago: health check failed \(ECONNREFUSED\) \d+ times in a row after ready; crashed if lost for 5m00s/);
    await expectText(async () => (await card.locator('.flag').allTextContents()).join(' '), 'UNHEALTHY NOT READY');
    expect(await gate.textContent()).toMatch(/^Readiness gate: closed — unhealthy: health check failed/);
    expect(await phase.textContent()).toBe('ready');
    expect(await card.getAttribute('class')).toContain('unhealthy');
    await expectText(async () => (await page.locator('#events').textContent())?.includes('unhealthy after ready: health check failed (ECONNREFUSED)'), true);

    await r.sim.setMode('ready');
    await expectText(() => lost.count(), 0);
    await expectText(async () => (await gate.locator('b').textContent()), 'open');
    expect(await page.locator('#events').textContent()).toContain('healthy again: health check answered 200 again');
    expect(problems).toEqual([]);
  }, 60_000);
});

if (!haveChromium) {
  describe('the status page in headless Chromium', () => {
    it.skip(`needs ${chromiumPath} (Debian package chromium): skipped`, () => undefined);
  });
}

/** Polls `read` until it gives `want` (10 s), then asserts it. */
async function expectText(read: () => Promise<unknown>, want: unknown): Promise<void> {
  const got = await until(JSON.stringify(want), async () => {
    const v = await read();
    return v === want ? v : undefined;
  }, 10_000).catch(async () => read());
  expect(got).toBe(want);
}
