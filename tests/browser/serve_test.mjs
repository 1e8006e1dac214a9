// `gpuplan serve` in headless Chromium, as a person uses it: the calculator draws memory bars whose
// total matches `gpuplan memory --json`, reacts to a changed input, shows a bad input as an error on
// the page; the advisor answers a workload form with its report's charts, and shows a bad model as
// an error. Usage: node serve_test.mjs URL EXPECTED_TOTAL_GIB
import {launch, tally} from './harness.mjs';

const [url, expectedGiB] = process.argv.slice(2);
const t = tally('');
const check = t.check;
const browser = await launch();
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(60000);
  await page.goto(url, {waitUntil: 'load'});
  await page.waitForSelector('#membar .seg');
  const total = await page.$eval('#mem-total', e => parseFloat(e.textContent));
  check('memory total matches the CLI', Math.abs(total - Number(expectedGiB)) < 0.01, `${total} vs ${expectedGiB}`);
  const segs = await page.$$eval('#membar .seg', s => s.map(e => e.dataset.term));
  check('bars for weights, gradients, optimizer', ['weights', 'gradients', 'optimizer'].every(t => segs.includes(t)), segs.join(','));
  const speed = await page.$eval('#speed-table', e => e.textContent);
  check('speed and cost shown', /step time/.test(speed) && /tokens\/s/.test(speed) && /\$/.test(speed), speed);

  // Live: QLoRA needs far less memory than a full fine-tune.
  await page.select('select[name=task]', 'qlora');
  await page.waitForFunction(t => parseFloat(document.querySelector('#mem-total').textContent) < t, {}, total / 2);
  check('changing the task redraws the bars', true);

  // A bad input is an error on the page, in the CLI's words.
  await page.$eval('input[name=batch]', e => { e.value = '-3'; e.dispatchEvent(new Event('input', {bubbles: true})); });
  await page.waitForSelector('#calc-error:not([hidden])');
  const err = await page.$eval('#calc-error', e => e.textContent);
  check('bad batch shown as an error', /--batch/.test(err) && /at least 1/.test(err), err);
  await page.$eval('input[name=batch]', e => { e.value = '1'; e.dispatchEvent(new Event('input', {bubbles: true})); });
  await page.waitForSelector('#calc-error[hidden]');
  check('the error clears when the input is fixed', true);

  // The advisor: a workload form, its reasons and the report's charts.
  await page.click('#advise-go');
  await page.waitForSelector('#advice-title');
  const reasons = await page.$$eval('#advice li', l => l.length);
  check('advisor gives reasons', reasons > 0, String(reasons));
  const charts = await page.$eval('#report', f => (f.srcdoc.match(/<svg/g) || []).length);
  check('advisor shows the report charts', charts >= 2, String(charts));
  await page.$eval('#advise input[name=model]', e => { e.value = 'no-such-model'; });
  await page.click('#advise-go');
  await page.waitForSelector('#advise-error:not([hidden])');
  const aerr = await page.$eval('#advise-error', e => e.textContent);
  check('advisor shows a bad model as an error', /unknown model 'no-such-model'/.test(aerr), aerr);
} catch (e) {
  check('no exception', false, e.message);
} finally {
  await browser.close();
}
t.finish();
