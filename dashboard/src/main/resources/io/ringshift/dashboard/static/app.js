// The ringshift dashboard: renders the state the server sends (GET api/state, then server-sent events on
// api/events) and draws the ring from api/ring when its epoch changes. No library, no network beyond this server.
'use strict';

const params = new URLSearchParams(location.search);
let cluster = params.get('cluster') || '';
let ringKey = null;
let ringData = null;
let events = null;
let lastState = null;

const $ = id => document.getElementById(id);
const STATES = ['PENDING', 'COPYING', 'CAUGHT_UP', 'FENCED', 'VERIFIED', 'BLOCKED', 'FAILED', 'UNKNOWN'];
const STATE_COLORS = {PENDING: '#8a94a3', COPYING: '#2166ac', CAUGHT_UP: '#6a51a3', FENCED: '#e08214',
  VERIFIED: '#1b9e77', BLOCKED: '#b8579a', FAILED: '#c0392b', UNKNOWN: '#555'};
const ZONE_HUES = {'az-1': 212, 'az-2': 28, 'az-3': 150};

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'style') e.setAttribute('style', v);
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function bytes(n) {
  if (n === null || n === undefined || n < 0) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n.toFixed(0) : n.toFixed(n < 10 ? 2 : 1)) + ' ' + units[i];
}
function seconds(s) {
  if (s === null || s === undefined || s < 0) return 'unknown';
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
}
function time(ms) { return ms ? new Date(ms).toLocaleTimeString() : '-'; }
function pct(f) { return (100 * f).toFixed(1) + '%'; }

function zoneHue(zone) {
  if (zone in ZONE_HUES) return ZONE_HUES[zone];
  let h = 0;
  for (const c of String(zone)) h = (h * 31 + c.charCodeAt(0)) % 360;
  return h;
}
// A node's colour: its zone's hue, a lightness of its own among the zone's nodes.
function nodeColors(members) {
  const byZone = {};
  members.forEach(m => (byZone[m.zone] = byZone[m.zone] || []).push(m.id));
  const colors = {};
  for (const [zone, ids] of Object.entries(byZone)) {
    ids.sort();
    ids.forEach((id, i) => {
      const light = ids.length === 1 ? 50 : 32 + 40 * i / (ids.length - 1);
      colors[id] = `hsl(${zoneHue(zone)} 62% ${light.toFixed(0)}%)`;
    });
  }
  return colors;
}

function connect() {
  if (events) events.close();
  const q = cluster ? '?cluster=' + encodeURIComponent(cluster) : '';
  events = new EventSource('api/events' + q);
  setConnection('connecting');
  events.addEventListener('state', e => {
    setConnection('live');
    render(JSON.parse(e.data));
  });
  events.onerror = () => setConnection('reconnecting');
}
function setConnection(state) {
  const c = $('connection');
  c.dataset.state = state;
  c.textContent = state === 'live' ? 'live' : state;
}

function render(s) {
  lastState = s;
  if (!cluster) cluster = s.cluster;
  const select = $('cluster');
  const names = s.clusters.includes(s.cluster) ? s.clusters : s.clusters.concat([s.cluster]);
  if (select.options.length !== names.length || [...select.options].some((o, i) => o.value !== names[i])) {
    select.replaceChildren(...names.map(n => el('option', {value: n}, n)));
  }
  select.value = s.cluster;
  $('published').textContent = s.published
    ? `published epoch ${s.published.epoch} · ${s.published.members} members · ${s.published.checksum}`
    : (s.exists ? 'no published ring yet' : `no cluster ${s.cluster} on these topics`);
  $('published').dataset.epoch = s.published ? s.published.epoch : '';
  const problem = $('problem');
  problem.hidden = !s.problem;
  problem.textContent = s.problem || '';
  renderInFlight(s);
  renderEpochs(s.epochs);
  renderNodes(s.nodes);
  renderWorkers(s);
  renderRejected(s);
  const key = (s.ringKey || '') + '|' + (s.targetKey || '');
  if (key !== ringKey) {
    ringKey = key;
    if (s.ringKey) loadRing(s.cluster); else { ringData = null; drawRing(); }
  }
}

function renderInFlight(s) {
  const box = $('inflight');
  const f = s.inFlight;
  box.dataset.epoch = f ? f.epoch : '';
  if (!f) {
    box.replaceChildren(el('p', {class: 'empty'}, 'No epoch in flight: the cluster routes by its published ring.'),
      cleanupLine(s));
    return;
  }
  const p = f.progress;
  const stack = el('div', {class: 'stack', title: 'tasks by state'});
  const counts = el('div', {class: 'states', id: 'inflight-counts'});
  for (const state of STATES) {
    const n = f.byState[state] || 0;
    if (!n) continue;
    stack.append(el('div', {style: `width:${100 * n / p.tasks}%;background:${STATE_COLORS[state]}`}));
    counts.append(el('span', {class: 'state s-' + state, 'data-state': state, 'data-count': n}, `${n} ${state}`));
  }
  const throttle = f.throttle === null || f.throttle === undefined ? 'not reported'
    : (f.throttle === 0 ? 'unlimited' : bytes(f.throttle) + '/s');
  const facts = el('div', {class: 'facts'},
    fact(f.stage, 'stage'), fact(pct(p.fraction), 'done'),
    fact(bytes(p.copiedBytes) + (p.estimatedBytes > 0 ? ' of ' + bytes(p.estimatedBytes) : ''), 'copied'),
    fact(p.bytesPerSecond < 0 ? 'not started' : bytes(p.bytesPerSecond) + '/s', 'rate'),
    fact(seconds(p.etaSeconds), 'ETA'), fact(throttle, 'throttle (all workers)'),
    fact(`${p.verified} of ${p.tasks}`, 'tasks verified'));
  const waiting = el('div', {});
  if (f.waiting.length) {
    waiting.append(el('h2', {}, 'Why tasks wait'));
    const t = el('table', {}, el('tbody', {}, ...f.waiting.map(w =>
      el('tr', {}, el('td', {class: 'num'}, w.tasks), el('td', {class: 'why'}, w.reason)))));
    waiting.append(t);
  }
  const rows = f.tasks.map(t => el('tr', {'data-state': t.state},
    el('td', {}, t.kind), el('td', {}, t.range), el('td', {}, (t.sources || []).join(' ')), el('td', {}, t.target),
    el('td', {}, el('span', {class: 'state s-' + t.state}, t.state)),
    el('td', {class: 'num'}, bytes(t.copiedBytes) + (t.rangeBytes > 0 ? ' / ' + bytes(t.rangeBytes) : '')),
    el('td', {class: 'why'}, t.why || '')));
  const table = el('table', {id: 'tasks'}, el('thead', {}, el('tr', {}, ...['kind', 'range', 'sources', 'target',
    'state', 'copied', 'why'].map(h => el('th', {}, h)))), el('tbody', {}, ...rows));
  box.replaceChildren(
    el('p', {}, el('b', {id: 'inflight-title'}, `epoch ${f.epoch}`), ` ${f.cause} · plan ${f.plan} · planned at `
      + time(f.time)),
    el('div', {class: 'bar', title: 'done'}, el('div', {style: `width:${(100 * p.fraction).toFixed(1)}%`})),
    facts, stack, counts, waiting,
    el('h2', {}, `Tasks (${f.tasks.length < p.tasks ? 'first ' + f.tasks.length + ' of ' : ''}${p.tasks})`),
    el('div', {class: 'scroll'}, table), cleanupLine(s));
}
function fact(value, label) { return el('div', {}, el('b', {}, value), el('span', {}, label)); }
function cleanupLine(s) {
  const c = s.cleanups;
  if (!c || !c.count) return el('p', {class: 'note'}, 'No cleanups pending.');
  const parts = Object.entries(c.byState).map(([k, v]) => `${v} ${k}`).join(', ');
  return el('p', {class: 'note', id: 'cleanups'}, `Cleanups of old replicas: ${parts}.`);
}

function renderEpochs(epochs) {
  const chips = epochs.slice(-40).map(e => el('span', {class: 'chip e-' + e.last, title: e.cause + ': ' + e.last},
    `${e.epoch} ${e.last}`));
  $('timeline').replaceChildren(...chips);
  const rows = epochs.slice().reverse().map(e => el('tr', {'data-epoch': e.epoch, 'data-last': e.last},
    el('td', {class: 'num'}, e.epoch), el('td', {}, e.cause + (e.failure ? ' (failure)' : '')),
    el('td', {}, ...e.states.map(st => el('span', {class: 'state e-' + st.state,
      title: time(st.time) + (st.reason ? ': ' + st.reason : ''), style: 'margin-right:3px'},
    st.state + (st.plan ? ' v' + st.plan : '')))),
    el('td', {class: 'num'}, e.tasks === undefined ? '-' : e.tasks),
    el('td', {class: 'num'}, e.moved === undefined ? '-' : pct(e.moved) + (e.ideal ? ` (${(e.moved / e.ideal)
      .toFixed(2)}x ideal)` : '')),
    el('td', {class: 'why'}, e.states.map(st => st.reason).filter(r => r).join('; '))));
  $('epochs').tBodies[0].replaceChildren(...rows);
}

function renderNodes(nodes) {
  const colors = nodeColors(nodes.filter(n => n.zone).map(n => ({id: n.id, zone: n.zone})));
  const rows = nodes.map(n => el('tr', {'data-node': n.id, 'data-role': n.role, 'data-health': n.health},
    el('td', {}, el('span', {class: 'sw', style: `background:${colors[n.id] || '#999'};margin-right:5px`}), n.id),
    el('td', {}, n.zone || '-'), el('td', {}, n.role + (n.targetWeight ? ' → ' + n.targetWeight : '')),
    el('td', {class: 'num'}, n.weight || '-'), el('td', {class: 'num'}, n.tokens ?? '-'),
    el('td', {class: 'num'}, n.primaryShare === undefined ? '-' : pct(n.primaryShare)),
    el('td', {class: 'num'}, n.replicaShare === undefined ? '-' : pct(n.replicaShare)),
    el('td', {class: 'h-' + n.health, title: n.error || ''}, n.health),
    el('td', {class: 'num'}, n.keys ?? '-'), el('td', {class: 'num'}, n.fences ?? '-'),
    el('td', {class: 'num'}, n.fillingRanges ? n.fillingRanges + ' ranges' : '-'),
    el('td', {class: 'num'}, n.ringEpoch === undefined || n.ringEpoch < 0 ? '-' : n.ringEpoch)));
  $('nodes').tBodies[0].replaceChildren(...rows);
}

function renderWorkers(s) {
  const rate = b => b === 0 ? 'unlimited' : bytes(b) + '/s';
  $('workers').tBodies[0].replaceChildren(...s.workers.map(w => el('tr', {},
    el('td', {}, w.id), el('td', {class: 'num'}, rate(w.bytesPerSecond)),
    el('td', {class: 'num'}, rate(w.perSourceBytesPerSecond)), el('td', {class: 'num'}, w.maxTasks),
    el('td', {class: 'num'}, w.maxTasksPerSource), el('td', {class: 'num'}, w.maxTasksPerTarget),
    el('td', {class: 'num'}, w.activeTasks))));
  $('workers-note').textContent = s.workers.length ? ''
    : 'Workers do not publish their limits on the topics; `ringshift dev` and `ringshift demo` show their own. '
      + 'Tasks waiting for a throttle or a copy slot say so under "Why tasks wait".';
  $('clients').tBodies[0].replaceChildren(...s.clients.map(c => el('tr', {'data-client': c.name},
    el('td', {}, c.name), el('td', {class: 'num'}, c.epoch < 0 ? 'none yet' : c.epoch))));
  $('clients-note').textContent = 'Storage nodes report the epoch they route by in the nodes table.'
    + (s.clients.length ? '' : ' No other client reports here.');
  const parts = s.participants || {list: [], behind: 0, fenceOnly: null};
  $('participants').tBodies[0].replaceChildren(...parts.list.map(p => el('tr',
    {'data-participant': p.id, class: p.behind ? 'behind' : ''},
    el('td', {}, p.id), el('td', {}, p.kind), el('td', {class: 'num'}, p.epoch < 0 ? 'none yet' : p.epoch),
    el('td', {}, p.stage), el('td', {}, p.live ? 'held' : 'lapsed'))));
  $('participants-note').textContent = (parts.list.length
    ? parts.behind + ' live participant' + (parts.behind === 1 ? ' is' : 's are') + ' behind the newest route.'
    : 'No participant reports on ring.participants.')
    + (parts.fenceOnly ? ' Changes take the fence at cutover: ' + parts.fenceOnly + '.' : '');
}

function renderRejected(s) {
  $('rejected').tBodies[0].replaceChildren(...s.rejected.slice().reverse().map(r => el('tr', {},
    el('td', {}, time(r.time)), el('td', {class: 'why'}, r.reason))));
}

async function loadRing(name) {
  try {
    const r = await fetch('api/ring?cluster=' + encodeURIComponent(name), {cache: 'no-store'});
    ringData = r.ok ? await r.json() : null;
  } catch (e) {
    ringData = null;
  }
  drawRing();
}

function drawRing() {
  const canvas = $('ring');
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, cx = w / 2, cy = h / 2, R = Math.min(w, h) / 2 - 6;
  ctx.clearRect(0, 0, w, h);
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  ctx.fillStyle = dark ? '#e6e8eb' : '#1d232b';
  ctx.font = '15px system-ui, sans-serif';
  ctx.textAlign = 'center';
  if (!ringData) {
    ctx.fillText('no published ring yet', cx, cy);
    $('legend').replaceChildren();
    return;
  }
  const pub = ringData.published, target = ringData.target;
  const members = pub.members.concat(target ? target.members.filter(m => !pub.members.some(p => p.id === m.id)) : []);
  const colors = nodeColors(members);
  band(ctx, cx, cy, R * 0.80, R, pub, i => colors[pub.members[pub.owners[i]].id], () => 1);
  band(ctx, cx, cy, R * 0.74, R * 0.78, pub, i => `hsl(${zoneHue(pub.members[pub.owners[i]].zone)} 55% 45%)`,
    () => 1);
  if (target) {
    band(ctx, cx, cy, R * 0.50, R * 0.70, target, i => colors[target.members[target.owners[i]].id],
      i => target.changed[i] ? 1 : 0.18);
  }
  ctx.fillText(`epoch ${pub.epoch}`, cx, cy - 8);
  ctx.font = '12px system-ui, sans-serif';
  ctx.fillText(`${pub.members.length} nodes · ${pub.vnodes} tokens/weight · R=${pub.replicas}`, cx, cy + 10);
  if (target) {
    ctx.fillText(`→ epoch ${target.epoch}: ${target.changedRanges} ranges change`, cx, cy + 28);
  }
  $('legend').replaceChildren(...members.map(m => el('span', {}, el('i', {class: 'sw',
    style: 'background:' + colors[m.id]}), `${m.id} (${m.zone})`)));
}

// One annulus of ranges: range i runs from the end of range i-1 (the last one's, for the first) to its own end.
function band(ctx, cx, cy, r0, r1, ring, color, alpha) {
  const n = ring.ends.length;
  for (let i = 0; i < n; i++) {
    let from = i === 0 ? ring.ends[n - 1] - 1 : ring.ends[i - 1];
    const to = ring.ends[i];
    const a0 = from * 2 * Math.PI - Math.PI / 2, a1 = to * 2 * Math.PI - Math.PI / 2;
    ctx.beginPath();
    ctx.arc(cx, cy, r1, a0, a1);
    ctx.arc(cx, cy, r0, a1, a0, true);
    ctx.closePath();
    ctx.globalAlpha = alpha(i);
    ctx.fillStyle = color(i);
    ctx.fill();
  }
  ctx.globalAlpha = 1;
}

$('cluster').addEventListener('change', e => {
  cluster = e.target.value;
  history.replaceState(null, '', '?cluster=' + encodeURIComponent(cluster));
  ringKey = null;
  connect();
});
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', drawRing);
connect();
