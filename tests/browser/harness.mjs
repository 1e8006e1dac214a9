// What every browser test shares: Debian's Chromium launched headless through puppeteer-core, and
// a pass/fail tally that prints the closing "N passed, N failed" line and sets the exit code.
import puppeteer from 'puppeteer-core';

export function tally(label = '') {
  const t = {pass: 0, fail: 0};
  t.check = (name, ok, detail = '') => { if (ok) t.pass++; else { t.fail++; console.log(`FAIL ${name} ${detail}`); } };
  t.finish = () => {
    console.log(`${label}${t.pass} passed, ${t.fail} failed`);
    process.exit(t.fail ? 1 : 0);
  };
  return t;
}

export function launch() {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
           '--disable-sync', '--no-first-run'],
  });
}
