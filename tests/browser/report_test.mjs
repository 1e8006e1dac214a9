// An `advise --html` report in headless Chromium, checked the way a manager reads it: the inputs,
// date, version and price dates are stated; no two texts in a chart cover each other (from the
// laid-out DOM's geometry, axis titles and ticks included); cost ticks are short; the deadline and
// budget lines are drawn when the workload has them; the roofline has y values; nothing scripted
// runs. Usage: node report_test.mjs FILE [deadline] [budget] [band]
import {launch, tally} from './harness.mjs';

const [file, ...expect] = process.argv.slice(2);
const t = tally('report: ');
const check = t.check;
const browser = await launch();
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(60000);
  await page.setViewport({width: 1000, height: 1200});
  await page.goto('file://' + file, {waitUntil: 'load'});
  const meta = await page.$eval('#meta', e => e.textContent);
  check('date stated', /Generated \d{4}-\d{2}-\d{2}/.test(meta), meta);
  check('version stated', /gpuplan \d+\.\d+\.\d+ \(commit/.test(meta), meta);
  check('price dates stated', /Prices dated \d{4}/.test(meta), meta);
  if (expect.includes('band')) check('error band stated', /80% error band/.test(meta), meta);
  const inputs = await page.$$eval('table.inputs', t => t.map(e => e.textContent).join(' '));
  check('inputs restated', /constraint/.test(inputs) && /horizon/.test(inputs) && /(training job|service)/.test(inputs), inputs.slice(0, 200));

  // Every text in every chart, as laid out: no two boxes may intersect.
  const charts = await page.$$eval('svg', svgs => svgs.map(svg => ({
    label: svg.getAttribute('aria-label'),
    texts: [...svg.querySelectorAll('text')].map(t => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent, cls: t.getAttribute('class') || '', x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
    }),
    hasDeadline: !!svg.querySelector('line.deadline'),
    hasBudget: !!svg.querySelector('line.budget'),
  })));
  check('three charts', charts.length === 3, String(charts.length));
  for (const c of charts) {
    const overlaps = [];
    for (let i = 0; i < c.texts.length; i++)
      for (let j = i + 1; j < c.texts.length; j++) {
        const a = c.texts[i], b = c.texts[j];
        if (a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5) overlaps.push(`'${a.text}' / '${b.text}'`);
      }
    check(`no overlapping text in ${c.label}`, overlaps.length === 0, overlaps.slice(0, 5).join('; '));
  }
  const cost = charts.find(c => /^cost/.test(c.label));
  check('a cost chart', !!cost);
  if (cost) {
    const ticks = cost.texts.filter(t => t.cls === 'tick' && t.text.startsWith('$')).map(t => t.text);
    check('cost ticks are short', ticks.length >= 3 && ticks.every(t => t.length <= 7), ticks.join(' '));
    if (expect.includes('deadline')) check('deadline drawn', cost.hasDeadline && cost.texts.some(t => /^deadline/.test(t.text)));
    if (expect.includes('budget')) check('budget drawn', cost.hasBudget && cost.texts.some(t => /budget/.test(t.text)));
  }
  const roof = charts.find(c => c.label === 'roofline');
  check('roofline has y values', roof && roof.texts.filter(t => /FLOP\/s$/.test(t.text) && t.cls === 'tick').length >= 4);
  check('no script in the report', (await page.$$('script')).length === 0);
} finally {
  await browser.close();
}
t.finish();
