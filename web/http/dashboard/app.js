// fibnic dashboard: plain JavaScript over the REST API (/api/v1) and its
// Server-Sent Events stream. Every value is inserted as text, never as HTML.
'use strict';

const api = {
  async get(path) {
    const r = await fetch(path, { headers: { Accept: 'application/json' } });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error((body.error && body.error.message) || r.status + ' ' + r.statusText);
    return body;
  },
};

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
const $ = (id) => document.getElementById(id);
const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US', { maximumFractionDigits: 1 }) : '–');
function setText(id, v) { const e = $(id); if (e) e.textContent = v; }
function fillRows(tbody, rows) { tbody.replaceChildren(...rows); }
function stateBadge(s) { return el('span', { class: 'state ' + s }, s); }
function pathsText(paths) { return (paths || []).map((p) => p.text).join(', '); }
function duration(s) {
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60, sec = Math.floor(s % 60);
  return (d ? d + 'd ' : '') + (d || h ? h + 'h ' : '') + m + 'm ' + sec + 's';
}
function timeOf(ms) { return new Date(ms).toLocaleTimeString('en-GB', { hour12: false }); }

// ---------------------------------------------------------------- pages
const pages = {};
let openapi = null;

function offered(a) {
  if (!openapi) return false;
  if (a.dataset.needs) return a.dataset.needs in openapi.paths;
  if (a.dataset.needsPrefix) return Object.keys(openapi.paths).some((p) => p.startsWith(a.dataset.needsPrefix));
  return true;
}

function show(page) {
  const links = [...document.querySelectorAll('#nav a')].filter((a) => !a.hidden);
  if (!links.some((a) => a.dataset.page === page)) page = links.length ? links[0].dataset.page : 'overview';
  for (const a of links) a.classList.toggle('active', a.dataset.page === page);
  for (const s of document.querySelectorAll('.page')) s.classList.toggle('active', s.id === 'page-' + page);
  if (pages[page] && pages[page].enter) pages[page].enter();
}

// ---------------------------------------------------------------- overview
let chart = null;
const rateSeries = { labels: [], routes: [], bytes: [] };

function renderStatus(st) {
  const dev = st.device || {};
  setText('dev-name', dev.name || '(no device)');
  setText('dev-generation', dev.generation !== undefined ? fmt(dev.generation) : dev.error || '–');
  const caps = dev.caps || st.caps;
  setText('dev-model', caps ? `${caps.code_bits}-bit codes, ${caps.slots} slots, ${caps.tcam_entries} TCAM, ${caps.ports} ports${caps.drop ? ', drops blackholes' : ''}` : '–');
  setText('dev-control', dev.control ? ['ipv4', 'ipv6'].filter((f) => dev.control[f]).join(' + ') || 'disabled' : '–');
  setText('uptime', duration(st.uptime_s));
  for (const [f, id] of [['ipv4', 'v4'], ['ipv6', 'v6']]) {
    const c = st.routes[f];
    setText(id + '-total', fmt(c.total));
    setText(id + '-offloaded', fmt(c.offloaded));
    setText(id + '-partial', fmt(c.partial));
    setText(id + '-punted', fmt(c.punted));
    setText(id + '-shadowed', fmt(c.shadowed));
  }
  setText('slots', `${st.slots.used} / ${st.slots.total}`);
  setText('neighbors', fmt(st.neighbors));
  setText('candidates', fmt(st.candidates));
  setText('commits', fmt(st.commits));
  setText('rate-routes', fmt(st.rates.routes_per_s));
  setText('rate-bytes', fmt(st.rates.bar_bytes_per_s));
  setText('rate-commits', fmt(st.rates.commits_per_s));
  renderSources(st.sources || {});
}

// Each source's health as `fibnicctl status` prints it — up or down, its
// routes and errors, what to know — with every counter on request; the
// pipeline's health on a line of its own.
function renderSources(sources) {
  const box = $('sources');
  const src = Object.entries(sources).filter(([name, v]) => name !== 'pipeline' && v && typeof v === 'object');
  if (!src.length) return;
  box.classList.remove('muted');
  const head = el('tr', {}, ...['source', 'state', 'routes', 'errors', 'note', ''].map((h) => el('th', {}, h)));
  const rows = src.map(([name, v]) => el('tr', { dataset: { source: name } },
    el('th', {}, name), el('td', { class: 'source-state' }, stateBadge(v.state || '–')),
    el('td', { class: 'num source-routes' }, fmt(v.routes)), el('td', { class: 'num' }, fmt(v.errors)),
    el('td', {}, sourceNote(v)),
    el('td', {}, el('details', {}, el('summary', {}, 'all'), counters(v)))));
  const parts = [el('table', { class: 'grid' }, el('thead', {}, head), el('tbody', {}, ...rows))];
  const p = sources.pipeline;
  if (p && typeof p === 'object') {
    parts.push(el('p', { id: 'pipeline-health' },
      `pipeline: queue ${fmt(p.queue_depth)} (deepest ${fmt(p.queue_depth_max)}), ${fmt(p.batches)} batches, ` +
      `${fmt(p.push_errors)} push errors, ${fmt(p.resyncs)} resyncs` + (p.last_error ? `; last error: ${p.last_error}` : '')));
  }
  box.replaceChildren(...parts);
}

function sourceNote(v) {
  const notes = [];
  if (typeof v.refusing === 'string') notes.push(v.refusing);
  if (v.connected === true && typeof v.peer === 'string') notes.push('zebra ' + v.peer);
  if (typeof v.loads === 'number') notes.push('loads: ' + fmt(v.loads));
  if (typeof v.last_error === 'string' && v.last_error) notes.push('last error: ' + v.last_error);
  return notes.join('; ') || '–';
}

// Every counter of a source, nested ones flattened ("memory bytes routes").
function counters(v, prefix = '') {
  const dl = el('dl', { class: 'counters' });
  const add = (obj, pre) => {
    for (const [k, x] of Object.entries(obj)) {
      const name = pre + k.replace(/_/g, ' ');
      if (x && typeof x === 'object') add(x, name + ' ');
      else dl.append(el('dt', {}, name), el('dd', {}, typeof x === 'number' ? fmt(x) : x === '' || x === null ? '–' : String(x)));
    }
  };
  add(v, prefix);
  return dl;
}

function ensureChart() {
  if (chart || typeof Chart === 'undefined') return;
  chart = new Chart($('rate-chart'), {
    type: 'line',
    data: {
      labels: rateSeries.labels,
      datasets: [
        { label: 'routes/s', data: rateSeries.routes, borderColor: '#1f6feb', backgroundColor: '#1f6feb22', fill: true, yAxisID: 'y', pointRadius: 0, tension: 0.2 },
        { label: 'BAR bytes/s', data: rateSeries.bytes, borderColor: '#bf3989', pointRadius: 0, yAxisID: 'y1', tension: 0.2 },
      ],
    },
    options: {
      animation: false, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false },
      scales: {
        x: { ticks: { maxTicksLimit: 8 } },
        y: { beginAtZero: true, title: { display: true, text: 'routes/s' } },
        y1: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: 'bytes/s' } },
      },
    },
  });
}

function pushRate(p) {
  const label = timeOf(p.unix_ms);
  if (rateSeries.labels.length && rateSeries.labels[rateSeries.labels.length - 1] === label) return;
  rateSeries.labels.push(label);
  rateSeries.routes.push(p.routes_per_s);
  rateSeries.bytes.push(p.bar_bytes_per_s);
  while (rateSeries.labels.length > 300) { rateSeries.labels.shift(); rateSeries.routes.shift(); rateSeries.bytes.shift(); }
}

function eventRow(e, withSeq) {
  return el('tr', {}, withSeq ? el('td', {}, e.seq) : null, el('td', {}, timeOf(e.unix_ms)),
    el('td', { class: 'lvl-' + e.level }, e.level), el('td', {}, e.category), el('td', {}, e.message));
}

const recentEvents = [];
function addEvents(evs) {
  for (const e of evs) {
    if (recentEvents.length && recentEvents[recentEvents.length - 1].seq >= e.seq) continue;
    recentEvents.push(e);
  }
  while (recentEvents.length > 500) recentEvents.shift();
  fillRows($('overview-events'), recentEvents.slice(-8).reverse().map((e) => eventRow(e, false)));
  if ($('page-events').classList.contains('active')) pages.events.enter();
}

pages.overview = {
  async enter() {
    try {
      renderStatus(await api.get('/api/v1/status'));
      const r = await api.get('/api/v1/rates');
      rateSeries.labels.length = rateSeries.routes.length = rateSeries.bytes.length = 0;
      r.points.forEach(pushRate);
      ensureChart();
      if (chart) chart.update();
    } catch (e) { setText('dev-name', 'error: ' + e.message); }
  },
};

// ---------------------------------------------------------------- live stream
let lastRateMs = 0;
function connectStream() {
  const es = new EventSource('/api/v1/stream');
  es.addEventListener('open', () => { $('live').className = 'live'; $('live').textContent = 'live'; });
  es.addEventListener('error', () => {
    $('live').className = 'live off';
    // A refused stream (401 when the server has a token, 429 over the stream
    // cap) closes the EventSource for good: poll the status instead.
    if (es.readyState === EventSource.CLOSED) { pollStatus(); return; }
    $('live').textContent = 'reconnecting';
  });
  es.addEventListener('status', (m) => onLiveStatus(JSON.parse(m.data)));
  es.addEventListener('log', (m) => addEvents([JSON.parse(m.data)]));
}

let polling = false;
function pollStatus() {
  if (polling) return;
  polling = true;
  $('live').textContent = 'polling';
  const tick = async () => {
    try { onLiveStatus(await api.get('/api/v1/status')); } catch (e) { $('live').textContent = 'offline'; }
    setTimeout(tick, 2000);
  };
  tick();
}

function onLiveStatus(st) {
  renderStatus(st);
  const now = Date.now();
  if (now - lastRateMs >= 1000) {
    lastRateMs = now;
    pushRate({ unix_ms: now, routes_per_s: st.rates.routes_per_s, bar_bytes_per_s: st.rates.bar_bytes_per_s });
    ensureChart();
    if (chart) chart.update();
  }
}

// ---------------------------------------------------------------- SRAM picture
const PALETTE = ['#161b22', '#2f81f7', '#3fb950', '#f0883e', '#bc8cff', '#ff7b72', '#39c5cf', '#d29922',
  '#db61a2', '#7ee787', '#a5d6ff', '#ffa657', '#d2a8ff', '#ffb3ad', '#56d4dd', '#e3b341'];
function rgb(hex) { return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)); }
const sramState = { size: 1024, order: 'hilbert', bytes: null, owners: {} };

function hilbertXy2D(n, x, y) {
  let d = 0;
  for (let s = n / 2; s > 0; s = Math.floor(s / 2)) {
    const rx = (x & s) > 0 ? 1 : 0, ry = (y & s) > 0 ? 1 : 0;
    d += s * s * ((3 * rx) ^ ry);
    if (ry === 0) {
      if (rx === 1) { x = n - 1 - x; y = n - 1 - y; }
      [x, y] = [y, x];
    }
  }
  return d;
}

function pixelBlock(x, y) {
  const n = sramState.size, per = (4096 / n) * (4096 / n);
  const d = sramState.order === 'hilbert' ? hilbertXy2D(n, x, y) : y * n + x;
  const first = d * per;
  const addr = [first >>> 16 & 255, first >>> 8 & 255, first & 255, 0].join('.');
  return addr + '/' + (24 - Math.log2(per));
}

pages.sram = {
  async enter() {
    sramState.order = $('sram-order').value;
    try {
      const sum = await api.get('/api/v1/sram');
      const total = sum.slash24s;
      sramState.owners = {};
      for (const c of sum.codes) sramState.owners[c.code] = c.owner;
      setText('sram-source', `source: ${sum.source} · ${fmt(sum.words_nonzero)} of ${fmt(sum.words)} words non-zero`);
      fillRows($('sram-legend'), sum.by_code.map((n, code) => el('tr', {},
        el('td', {}, el('span', { class: 'swatch', style: 'background:' + PALETTE[code] }), code),
        el('td', {}, code === 0 ? 'punt (host)' : sramState.owners[code] || 'free'),
        el('td', {}, fmt(n)), el('td', {}, (100 * n / total).toFixed(2) + '%'))));
      const r = await fetch(`/api/v1/sram/map?size=${sramState.size}&order=${sramState.order}`);
      if (!r.ok) throw new Error('sram map: ' + r.status);
      sramState.bytes = new Uint8Array(await r.arrayBuffer());
      const cv = $('sram-canvas'), ctx = cv.getContext('2d');
      const img = ctx.createImageData(sramState.size, sramState.size);
      const cols = PALETTE.map(rgb);
      for (let i = 0; i < sramState.bytes.length; i++) {
        const v = sramState.bytes[i], c = cols[v & 15], mixed = v & 0x80;
        img.data[4 * i] = mixed ? (c[0] + 255) >> 1 : c[0];
        img.data[4 * i + 1] = mixed ? (c[1] + 255) >> 1 : c[1];
        img.data[4 * i + 2] = mixed ? (c[2] + 255) >> 1 : c[2];
        img.data[4 * i + 3] = 255;
      }
      ctx.putImageData(img, 0, 0);
    } catch (e) { setText('sram-hover', 'error: ' + e.message); }
  },
};

function sramHover(ev) {
  if (!sramState.bytes) return;
  const cv = $('sram-canvas'), r = cv.getBoundingClientRect();
  const x = Math.floor((ev.clientX - r.left) / r.width * sramState.size);
  const y = Math.floor((ev.clientY - r.top) / r.height * sramState.size);
  if (x < 0 || y < 0 || x >= sramState.size || y >= sramState.size) return;
  const v = sramState.bytes[y * sramState.size + x], code = v & 15;
  const who = code === 0 ? 'punt (host)' : sramState.owners[code] || 'free';
  setText('sram-hover', `${pixelBlock(x, y)}  →  ${v & 0x80 ? 'mixed, mostly ' : ''}code ${code}: ${who}`);
}

// ---------------------------------------------------------------- routes
let routeNext = null;
async function searchRoutes(more) {
  const q = new URLSearchParams();
  for (const [id, key] of [['route-prefix', 'prefix'], ['route-covering', 'covering'], ['route-family', 'family'],
    ['route-state', 'state'], ['route-source', 'source']]) {
    const v = $(id).value.trim();
    if (v) q.set(key, v);
  }
  if (more && routeNext) q.set('after', routeNext);
  q.set('limit', '100');
  setText('route-error', '');
  try {
    const r = await api.get('/api/v1/routes?' + q);
    const rows = r.routes.map((rt) => el('tr', { class: 'route-row' }, el('td', {}, el('code', {}, rt.prefix)), el('td', {}, rt.source),
      el('td', {}, pathsText(rt.paths)), el('td', {}, stateBadge(rt.state)), el('td', {}, rt.reason === 'none' ? '' : rt.reason),
      el('td', {}, rt.family === 'ipv4' ? `${rt.slash24_punted} / ${rt.slash24_total}` : '')));
    if (more) $('route-rows').append(...rows); else fillRows($('route-rows'), rows);
    routeNext = r.next;
    $('route-more').hidden = !routeNext;
    setText('route-count', `${$('route-rows').children.length} shown` + (routeNext ? ', more available' : ''));
  } catch (e) { setText('route-error', e.message); }
}
pages.routes = { enter() { if (!$('route-rows').children.length) searchRoutes(false); } };

// ---------------------------------------------------------------- lookup
function dlRows(dl, pairs) {
  dl.replaceChildren(...pairs.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v === null || v === undefined ? '–' : v)]));
}
async function lookup() {
  const a = $('lookup-address').value.trim();
  setText('lookup-error', '');
  if (!a) return;
  try {
    const r = await api.get('/api/v1/lookup/' + encodeURIComponent(a));
    $('lookup-result').hidden = false;
    const v = $('lookup-verdict');
    v.className = 'verdict ' + r.verdict;
    v.textContent = { match: '✔ the device forwards exactly as the RIB says', punt: 'the device punts this destination to the host (safe)',
      drop: '✔ the device drops this destination, as the RIB\'s blackhole says',
      mismatch: '✘ MISMATCH: the device forwards or drops where the RIB does not', 'no-device': 'no device attached' }[r.verdict] || r.verdict;
    const rib = r.rib;
    dlRows($('lookup-rib'), [['matched', rib.matched], ['path', rib.path && rib.path.text], ['reason', rib.reason],
      ['neighbour', rib.neighbor && `${rib.neighbor.address} ${rib.neighbor.mac} (${rib.neighbor.state})`],
      ['expected', rib.expected ? `${rib.expected.mac} port ${rib.expected.port}` : rib.drop ? 'drop' : 'punt']]);
    const hw = r.hardware;
    dlRows($('lookup-hw'), hw ? [['decision', hw.forward ? 'forward' : hw.drop ? 'drop' : 'punt'], ['why', hw.why], ['code', hw.code],
      ['TCAM entry', hw.tcam_index >= 0 ? hw.tcam_index : null], ['egress', hw.forward ? `${hw.mac} port ${hw.port}` : null],
      ['SRAM word', r.sram_word !== undefined ? r.sram_word : null]] : [['device', 'none']]);
  } catch (e) { setText('lookup-error', e.message); $('lookup-result').hidden = true; }
}

// ---------------------------------------------------------------- tables
pages.tcam = {
  async enter() {
    const r = await api.get('/api/v1/tcam');
    setText('tcam-used', `(${r.used} of ${r.entries.length} used, ${r.source})`);
    fillRows($('tcam-rows'), r.entries.map((e) => el('tr', { class: e.valid ? '' : 'invalid' }, el('td', {}, e.index),
      el('td', {}, e.valid ? 'yes' : 'no'), el('td', {}, el('code', {}, e.prefix || `${e.value} & ${e.mask}`)),
      el('td', {}, e.code), el('td', {}, e.nexthop ? e.nexthop.text : ''), el('td', {}, e.in_sync === null ? '' : e.in_sync ? 'yes' : 'NO'))));
  },
};

pages.nexthops = {
  async enter() {
    const n = await api.get('/api/v1/nexthops');
    const entry = (e) => !e ? '' : e.drop ? `${e.valid ? 'valid' : 'invalid'} drop`
      : `${e.valid ? 'valid' : 'invalid'}${e.connected ? ' connected' : ''} ${e.mac} port ${e.port}`;
    fillRows($('nexthop-rows'), n.slots.map((s) => el('tr', {}, el('td', {}, el('span', { class: 'swatch', style: 'background:' + PALETTE[s.code & 15] }), s.code),
      el('td', {}, s.owner ? s.owner.text : 'free'), el('td', {}, fmt(s.weight)), el('td', {}, entry(s.entry)),
      el('td', {}, entry(s.device)), el('td', {}, s.in_sync === null ? '' : s.in_sync ? 'yes' : 'NO'))));
    const nb = await api.get('/api/v1/neighbors');
    setText('neigh-cam', nb.cam_used === null ? '' : `(${nb.cam_used} of ${nb.cam_entries} CAM entries used)`);
    fillRows($('neighbor-rows'), nb.neighbors.map((x) => el('tr', {}, el('td', {}, el('code', {}, x.address)), el('td', {}, x.mac),
      el('td', {}, x.port), el('td', {}, x.state), el('td', {}, x.cam_index === null ? 'not loaded' : '#' + x.cam_index))));
  },
};

pages.events = {
  async enter() {
    if (!recentEvents.length) addEvents((await api.get('/api/v1/events?limit=500')).events);
    fillRows($('event-rows'), recentEvents.slice().reverse().map((e) => eventRow(e, true)));
  },
};

// IP-NUMA: whatever GET collections ipnumad mounts under /api/v1/ipnuma/,
// each shown as a table of its array's objects; an object of plain values
// as a table of name and value (counters with thousands separators).
pages.ipnuma = {
  async enter() {
    const body = $('ipnuma-body');
    const paths = Object.keys(openapi.paths).filter((p) => p.startsWith('/api/v1/ipnuma/') && !p.includes('{') && openapi.paths[p].get);
    const panels = [];
    for (const p of paths) {
      const panel = el('div', { class: 'panel' }, el('h3', {}, openapi.paths[p].get.summary || p));
      try {
        const data = await api.get(p);
        for (const [k, v] of Object.entries(data)) {
          if (Array.isArray(v)) panel.append(el('h3', {}, k), genericTable(v));
          else if (typeof v !== 'object' || v === null) panel.append(el('div', {}, `${k}: ${v}`));
          else if (Object.values(v).every((x) => x === null || typeof x !== 'object')) panel.append(el('h3', {}, k), valueTable(k, v));
          else panel.append(el('h3', {}, k), el('code', {}, JSON.stringify(v)));
        }
      } catch (e) { panel.append(el('div', { class: 'error' }, e.message)); }
      panels.push(panel);
    }
    body.replaceChildren(...panels);
  },
};
function valueTable(name, obj) {
  return el('table', { class: 'grid', dataset: { collection: name } }, el('tbody', {}, ...Object.entries(obj).map(([k, v]) =>
    el('tr', {}, el('td', {}, el('code', {}, k)), el('td', { class: 'num', dataset: { key: k } }, typeof v === 'number' && name === 'counters' ? fmt(v) : String(v))))));
}
function genericTable(rows) {
  if (!rows.length) return el('div', { class: 'muted' }, 'none');
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
  return el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, ...cols.map((c) => el('th', {}, c)))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...cols.map((c) => el('td', {}, cell(r[c])))))));
}

// ---------------------------------------------------------------- start
async function start() {
  openapi = await api.get('/api/v1/openapi.json');
  for (const a of document.querySelectorAll('#nav a')) a.hidden = !offered(a);
  $('route-form').addEventListener('submit', (e) => { e.preventDefault(); searchRoutes(false); });
  $('route-more').addEventListener('click', () => searchRoutes(true));
  $('lookup-form').addEventListener('submit', (e) => { e.preventDefault(); lookup(); });
  $('sram-order').addEventListener('change', () => pages.sram.enter());
  $('sram-canvas').addEventListener('mousemove', sramHover);
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));
  if ('/api/v1/events' in openapi.paths) addEvents((await api.get('/api/v1/events?limit=100')).events);
  show(location.hash.slice(1) || 'overview');
  if ('/api/v1/stream' in openapi.paths) connectStream();
  document.body.dataset.ready = '1';
}
document.addEventListener('DOMContentLoaded', () => start().catch((e) => { document.body.prepend(el('div', { class: 'error' }, 'dashboard failed: ' + e.message)); }));
