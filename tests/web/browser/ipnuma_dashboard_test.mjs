// Drives the dashboard's IP-NUMA page (served by ipnumad) in Debian's
// headless Chromium and checks what it shows against the NIC itself: the
// counters are written into the BAR0 file here, at the contract's offsets
// (docs/contract/IPNUMA.md: COUNTERS at 0x100, EXT_COUNTERS at 0x200, one
// u64 each), as the NIC would count them, and PEER_STATE[1] marks the peer
// down; the page must show exactly those values.
//   node ipnuma_dashboard_test.mjs BASE_URL BAR0_FILE SCREENSHOT_DIR
import { openPage } from './chromium_page.mjs';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const [base, bar, shots] = process.argv.slice(2);
if (!base || !bar || !shots) {
  console.error('usage: ipnuma_dashboard_test.mjs BASE_URL BAR0_FILE SCREENSHOT_DIR');
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });

// The contract's counter tables, in order (the reserved sixteenth left out).
const BASE = ['tx_writes', 'rx_writes', 'rx_denied', 'retransmits', 'acks', 'errors_sent'];
const EXT = ['tx_unmapped', 'tx_peer_down_refused', 'tx_disabled', 'tx_reads', 'acks_received', 'errors_received',
  'peers_down', 'rx_malformed', 'rx_duplicate', 'rx_out_of_order', 'rx_stale_epoch', 'rx_no_peer_state',
  'rx_disabled', 'rx_reads', 'rx_reads_denied'];

// Distinct values, some above 2^32 (both halves of the u64 matter), all
// below 2^53 (exact in JavaScript).
const want = {};
const fd = fs.openSync(bar, 'r+');
const put64 = (off, v) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  fs.writeSync(fd, b, 0, 8, off);
};
BASE.forEach((k, i) => { want[k] = i % 2 ? 1000 * (i + 1) + 7 : 2 ** 32 * (i + 1) + i; put64(0x100 + 8 * i, want[k]); });
EXT.forEach((k, i) => { want[k] = i % 3 ? 31 * (i + 1) : 2 ** 33 + i; put64(0x200 + 8 * i, want[k]); });
const down = Buffer.alloc(4);
down.writeUInt32LE(1);
fs.writeSync(fd, down, 0, 4, 0x4000 + 4 * 1);
fs.closeSync(fd);

const { page, errors, close } = await openPage();
try {
  await page.goto(base + '/#ipnuma', { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="1"]', { timeout: 15000 });
  assert.ok(await page.isVisible('#nav a[data-page="ipnuma"]'), 'the IP-NUMA page is not offered');
  const table = '#ipnuma-body table[data-collection="counters"]';
  await page.waitForSelector(table, { timeout: 10000 });
  const shown = await page.$$eval(`${table} td[data-key]`, (tds) => tds.map((td) => [td.dataset.key, td.textContent]));
  const got = Object.fromEntries(shown.map(([k, v]) => [k, Number(v.replace(/,/g, ''))]));
  assert.deepEqual(Object.keys(got).sort(), [...BASE, ...EXT].sort(), 'the counters shown are not the contract\'s');
  for (const k of [...BASE, ...EXT]) assert.equal(got[k], want[k], `counter ${k}: page ${got[k]}, NIC ${want[k]}`);
  console.log(`ipnuma page: ${shown.length} counters equal the NIC's`);

  // The peer whose PEER_STATE reads DOWN (its ipnumad never answers, so it
  // stays down): the peers table says so. Rows are read by column name.
  let peer = null;
  for (let attempt = 0; attempt < 20 && !(peer && peer.down === 'true'); attempt++) {
    await page.click('#nav a[data-page="ipnuma"]');
    await page.evaluate(() => window.dispatchEvent(new HashChangeEvent('hashchange')));
    await page.waitForTimeout(250);
    peer = await page.evaluate(() => {
      for (const t of document.querySelectorAll('#ipnuma-body table.grid')) {
        const cols = [...t.querySelectorAll('thead th')].map((th) => th.textContent);
        if (!cols.includes('stream_resets')) continue;
        for (const tr of t.querySelectorAll('tbody tr')) {
          const row = Object.fromEntries([...tr.children].map((td, i) => [cols[i], td.textContent]));
          if (row.name === 'far') return row;
        }
      }
      return null;
    });
  }
  assert.ok(peer, 'no row for peer far');
  assert.equal(peer.down, 'true', `peer far: down ${peer.down}`);
  assert.equal(peer.via_gateway, 'false');
  const api = await (await fetch(base + '/api/v1/ipnuma/peers')).json();
  assert.equal(String(api.peers[0].stream_resets), peer.stream_resets, 'stream_resets differs from the API');
  console.log('ipnuma page: peer far shown down, as PEER_STATE[1] reads');
  await page.screenshot({ path: path.join(shots, 'ipnuma.png'), fullPage: true });
  assert.deepEqual(errors, [], 'the page logged errors');
} finally {
  await close();
}
