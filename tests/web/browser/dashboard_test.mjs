// Drives the fibnic dashboard in Debian's headless Chromium through
// playwright-core and checks what it shows against the REST API:
//   node dashboard_test.mjs BASE_URL SCREENSHOT_DIR
// Exits non-zero on the first mismatch, with what differed.
import { openPage } from './chromium_page.mjs';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const [base, shots] = process.argv.slice(2);
if (!base || !shots) {
  console.error('usage: dashboard_test.mjs BASE_URL SCREENSHOT_DIR');
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });

async function api(p) {
  const r = await fetch(base + p);
  assert.equal(r.status, 200, `${p} answered ${r.status}`);
  return r.json();
}
const num = (s) => Number(String(s).replace(/,/g, ''));

const { page, errors, close } = await openPage();
try {
  // --- overview: numbers equal the API's
  await page.goto(base + '/', { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="1"]', { timeout: 15000 });
  await page.waitForFunction(() => document.getElementById('v4-total').textContent !== '–');
  // Routes churn while the page is open, and the counts follow every commit:
  // hold the churn (the demo's SIGUSR1), then the page's live values and the
  // API's must agree within a few updates.
  const churn = (sig) => { if (process.env.DEMO_PID) process.kill(Number(process.env.DEMO_PID), sig); };
  churn('SIGUSR1');
  let st = null, mismatch = '';
  for (let attempt = 0; attempt < 20; attempt++) {
    st = await api('/api/v1/status');
    mismatch = '';
    for (const [fam, id] of [['ipv4', 'v4'], ['ipv6', 'v6']]) {
      for (const k of ['total', 'offloaded', 'partial', 'punted']) {
        const shown = num(await page.textContent(`#${id}-${k}`));
        if (shown !== st.routes[fam][k]) mismatch += ` ${fam} ${k}: page ${shown}, API ${st.routes[fam][k]};`;
      }
    }
    if (await page.textContent('#slots') !== `${st.slots.used} / ${st.slots.total}`) mismatch += ' slots;';
    if (num(await page.textContent('#neighbors')) !== st.neighbors) mismatch += ' neighbours;';
    if (!mismatch) break;
    await page.waitForTimeout(250);
  }
  assert.equal(mismatch, '', 'overview never agreed with /api/v1/status:' + mismatch);
  assert.equal(await page.textContent('#dev-name'), st.device.name);
  // Sources: one row per source the API reports, its state and routes as the API's.
  const sources = Object.entries(st.sources || {}).filter(([n, v]) => n !== 'pipeline' && v && typeof v === 'object');
  const shownSources = await page.$$eval('#sources tr[data-source]', (rows) => rows.map((r) => ({
    name: r.dataset.source, state: r.querySelector('.source-state').textContent,
    routes: r.querySelector('.source-routes').textContent })));
  assert.deepEqual(shownSources.map((r) => r.name), sources.map(([n]) => n), 'the Sources card lists other sources than the API');
  for (const [name, v] of sources) {
    const want = v.state || '–';
    const row = shownSources.find((r) => r.name === name);
    assert.equal(row.state, want, `source ${name}: state`);
    if (typeof v.routes === 'number') assert.equal(num(row.routes), v.routes, `source ${name}: routes`);
  }
  if (st.sources && typeof st.sources.pipeline === 'object') {
    assert.match(await page.textContent('#pipeline-health'), /^pipeline: queue [\d,]+ \(deepest [\d,]+\)/);
  }
  if (!sources.length) assert.equal(await page.textContent('#sources'), 'none reported');
  churn('SIGUSR2');
  // Live updates arrive over SSE and the chart is drawn by Chart.js.
  await page.waitForSelector('#live:not(.off)', { timeout: 10000 });
  const chartOk = await page.evaluate(() => typeof Chart !== 'undefined' && !!Chart.getChart(document.getElementById('rate-chart')));
  assert.ok(chartOk, 'the rate chart was not created');
  await page.waitForTimeout(2500);  // a few live points on the plot
  await page.screenshot({ path: path.join(shots, 'overview.png'), fullPage: true });

  // --- route search: the rows are the API's answer for the same filter
  // (churn held: the slots, and so the offloaded set, move with it)
  churn('SIGUSR1');
  const filter = '1.0.0.0/8';
  await page.click('#nav a[data-page="routes"]');
  await page.fill('#route-prefix', filter);
  await page.selectOption('#route-state', 'offloaded');
  await page.click('#route-search');
  const want = await api('/api/v1/routes?prefix=' + encodeURIComponent(filter) + '&state=offloaded&limit=100');
  assert.ok(want.routes.length > 0, 'the API has offloaded routes in ' + filter);
  await page.waitForFunction((p) => {
    const c = document.querySelector('#route-rows tr td code');
    return c && c.textContent === p;
  }, want.routes[0].prefix, { timeout: 10000 });
  const shownPrefixes = await page.$$eval('#route-rows tr td:first-child code', (cs) => cs.map((c) => c.textContent));
  assert.deepEqual(shownPrefixes, want.routes.map((r) => r.prefix));
  const states = await page.$$eval('#route-rows .state', (cs) => [...new Set(cs.map((c) => c.textContent))]);
  assert.deepEqual(states, ['offloaded']);
  await page.screenshot({ path: path.join(shots, 'routes.png') });

  // --- lookup: an address inside the first route; the page shows the API's verdict
  const addr = want.routes[0].prefix.split('/')[0].replace(/\.0$/, '.9');
  await page.click('#nav a[data-page="lookup"]');
  await page.fill('#lookup-address', addr);
  await page.click('#lookup-go');
  await page.waitForSelector('#lookup-result:not([hidden])');
  const lk = await api('/api/v1/lookup/' + addr);
  assert.equal(await page.getAttribute('#lookup-verdict', 'class'), 'verdict ' + lk.verdict);
  const rib = await page.textContent('#lookup-rib');
  assert.ok(rib.includes(lk.rib.matched), `lookup page shows ${rib}, API matched ${lk.rib.matched}`);
  const hw = await page.textContent('#lookup-hw');
  assert.ok(hw.includes(lk.hardware.why), `hardware panel ${hw} lacks ${lk.hardware.why}`);
  if (lk.hardware.forward) assert.ok(hw.includes(lk.hardware.mac));
  await page.screenshot({ path: path.join(shots, 'lookup.png') });

  // --- SRAM picture: painted, the legend holding exactly the per-code counts
  // of the /api/v1/sram answer the page received (routes churn meanwhile).
  const sramResp = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/sram');
  await page.click('#nav a[data-page="sram"]');
  const sram = await (await sramResp).json();
  assert.equal(sram.by_code.reduce((a, b) => a + b, 0), 2 ** 24, 'SRAM /24 counts do not add up to 2^24');
  await page.waitForFunction((n) => document.querySelectorAll('#sram-legend tr').length === n, sram.by_code.length);
  const legend = await page.$$eval('#sram-legend tr td:nth-child(3)', (cs) => cs.map((c) => c.textContent));
  assert.deepEqual(legend.map(num), sram.by_code);
  await page.waitForFunction(() => {
    const cv = document.getElementById('sram-canvas');
    const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    for (let i = 0; i < d.length; i += 4 * 997) if (d[i] || d[i + 1] || d[i + 2]) return true;
    return false;
  }, null, { timeout: 10000 });
  await page.hover('#sram-canvas', { position: { x: 320, y: 320 } });
  assert.match(await page.textContent('#sram-hover'), /\/\d+ {2}→ {2}/);
  await page.screenshot({ path: path.join(shots, 'sram.png') });

  // --- TCAM and next-hops pages render the API's tables
  await page.click('#nav a[data-page="tcam"]');
  const tcam = await api('/api/v1/tcam');
  await page.waitForFunction((n) => document.querySelectorAll('#tcam-rows tr').length === n, tcam.entries.length);
  await page.click('#nav a[data-page="nexthops"]');
  const nbs = await api('/api/v1/neighbors');
  await page.waitForFunction((n) => document.querySelectorAll('#neighbor-rows tr').length === n, nbs.neighbors.length);
  await page.screenshot({ path: path.join(shots, 'nexthops.png') });

  assert.deepEqual(errors, [], 'the page logged errors');
  console.log(`dashboard ok: ${st.routes.ipv4.total} IPv4 + ${st.routes.ipv6.total} IPv6 routes; screenshots in ${shots}`);
} finally {
  await close();
}
