// The status page's logic: fetch /status.json every few seconds and render it. Plain
// browser JavaScript, no dependencies; text goes in through textContent only.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

/** A coloured label; the colour is the state's own, or the health status given (ok, degraded, down). */
function badge(state, status) {
  return el('span', { class: `badge ${status || state}` }, state);
}

function ago(iso, nowMs) {
  if (!iso) return '—';
  const s = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

function metric(list, name) {
  const m = list.find((x) => x.name === name);
  return m ? m.value : null;
}

function fmt(v, digits) {
  return v === null || v === undefined ? '—' : Number(v).toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function renderMeters(meters, nowMs) {
  const body = document.querySelector('#meters tbody');
  body.replaceChildren();
  if (meters.length === 0) {
    const tr = el('tr');
    tr.append(el('td', { colspan: 8, class: 'muted' }, 'No meters configured.'));
    body.append(tr);
    return;
  }
  for (const m of meters) {
    const tr = el('tr', { 'data-resource': m.resource_id });
    const power = metric(m.metrics, 'total_active_power');
    const energy = metric(m.metrics, 'active_energy_import');
    const others = m.metrics.filter((x) => x.name !== 'total_active_power' && x.name !== 'active_energy_import').map((x) => `${x.name} ${fmt(x.value, 2)} ${x.unit}`);
    const stateCell = el('td');
    stateCell.append(badge(m.state));
    if (m.consecutive_misses > 0) stateCell.append(el('span', { class: 'muted' }, ` ${m.consecutive_misses} missed`));
    // Why a P1 meter's telegrams give no sample, with the fix (one line from the source).
    if (m.problem) stateCell.append(el('div', { class: 'muted meter-problem' }, m.problem));
    tr.append(
      el('td', { title: m.resource_id }, m.resource_id.slice(0, 8)),
      el('td', {}, `${m.bus} / ${m.unit_id}`),
      el('td', {}, m.profile),
      stateCell,
      el('td', { class: 'num power' }, power === null ? '—' : `${fmt(power, 0)} W`),
      el('td', { class: 'num' }, energy === null ? '—' : `${fmt(energy / 1000, 1)} kWh`),
      el('td', { class: 'muted' }, others.join(', ') || '—'),
      el('td', { class: 'muted' }, ago(m.last_answered_at, nowMs)),
    );
    body.append(tr);
  }
}

/** Shown only when chargers are configured (the OCPP central system runs). */
function renderChargers(chargers, nowMs) {
  document.getElementById('chargers-section').hidden = !chargers || chargers.length === 0;
  const body = document.querySelector('#chargers tbody');
  body.replaceChildren();
  for (const c of chargers || []) {
    const tr = el('tr', { 'data-charger': c.charge_point_id });
    const stateCell = el('td');
    stateCell.append(badge(c.state));
    if (c.clock_ahead_s !== null) stateCell.append(el('span', { class: 'muted clock-ahead' }, ` clock ${c.clock_ahead_s} s ahead`));
    if (c.clock_problem) stateCell.append(el('div', { class: 'muted clock-problem' }, c.clock_problem));
    const connectors = c.connectors.map((k) => `${k.connector_id}: ${k.status}${k.error_code !== 'NoError' ? ` (${k.error_code})` : ''}${k.open_transaction ? `, transaction ${k.open_transaction.transaction_id}` : ''}${k.plan_strategy ? `, plan by ${k.plan_strategy.strategy}` : ''}${k.reservation ? `, reservation ${k.reservation.reservation_id} until ${new Date(k.reservation.expiry_date).toLocaleTimeString()}` : ''}`).join('; ');
    const sessions = c.open_transactions.map((t) => `${t.session} since ${new Date(t.started_at).toLocaleTimeString()}, ${fmt(t.energy_wh / 1000, 2)} kWh`).join('; ');
    tr.append(
      el('td', {}, c.charge_point_id),
      stateCell,
      modelCell(c),
      el('td', {}, connectors || '—'),
      el('td', {}, sessions || '—'),
      lastSessionCell(c),
      el('td', { class: 'muted' }, ago(c.last_message_at, nowMs)),
      operationsCell(c),
    );
    body.append(tr);
  }
}

/** Each planned connector: its target, the schedule sent to its charger (with the charger's answer) and the limit in force now. */
function renderPlans(chargers, nowMs) {
  const rows = (chargers || []).flatMap((c) => (c.plans || []).map((p) => ({ c, p })));
  document.getElementById('plans-section').hidden = rows.length === 0;
  const body = document.querySelector('#plans tbody');
  body.replaceChildren();
  const time = (iso) => new Date(iso).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' });
  for (const { c, p } of rows) {
    const t = p.target;
    const target = t ? `${fmt(t.energy_wh / 1000, 1)} kWh by ${time(t.departure_time)} (${t.source})${t.ended_at ? `, ended ${time(t.ended_at)}` : ''}` : '—';
    const s = p.charger_profile;
    const schedule = s ? `${s.purpose} ${s.status}, sent ${ago(s.sent_at, nowMs)}: ${s.periods.map((x) => `${time(x.start)} ${fmt(x.limit, 1)} ${s.rate_unit}`).join(', ')}; until ${time(s.ends_at)}` : 'none sent yet';
    let now = '—';
    if (s && nowMs < Date.parse(s.ends_at)) for (const x of s.periods) if (Date.parse(x.start) <= nowMs) now = `${fmt(x.limit, 1)} ${s.rate_unit}`;
    const tr = el('tr', { 'data-plan': `${c.charge_point_id}/${p.connector_id}` });
    tr.append(el('td', {}, `${c.charge_point_id} / ${p.connector_id}`), el('td', {}, target), el('td', { class: 'schedule' }, schedule), el('td', { class: 'num' }, now));
    body.append(tr);
  }
}

/** Vendor and model, firmware and the feature profiles it declared. */
function modelCell(c) {
  const td = el('td', {}, [c.vendor, c.model].filter(Boolean).join(' ') || '—');
  if (c.firmware_version) td.append(el('div', { class: 'muted firmware' }, `firmware ${c.firmware_version}`));
  if (c.supported_profiles) td.append(el('div', { class: 'muted profiles' }, c.supported_profiles.join(', ') || 'no feature profiles'));
  const strategies = (c.plan_strategies || []).map((s) => `${s.connector_id}: ${s.strategy} (${s.reason})`);
  if (strategies.length > 0) td.append(el('div', { class: 'muted strategies', title: 'plan strategy in force' }, `plan: ${strategies.join('; ')}`));
  return td;
}

/**
 * Operations go through the HTTP API with the operator's cpo token typed into this page
 * (#operator-token, kept in this tab's memory only): the page has no way around the API's
 * token check, so it can do nothing the token may not.
 */
function operationsCell(c) {
  const td = el('td', { class: 'operations' });
  const button = (label, operation, body) => {
    const b = el('button', { type: 'button', 'data-operation': operation }, label);
    b.addEventListener('click', () => operate(c.charge_point_id, operation, body));
    return b;
  };
  td.append(button('Soft reset', 'reset', { type: 'Soft' }));
  for (const k of c.connectors.filter((x) => x.connector_id > 0)) {
    td.append(button(`Unlock ${k.connector_id}`, 'unlock-connector', { connector_id: k.connector_id }));
    if (k.open_transaction) td.append(button(`Stop ${k.open_transaction.transaction_id}`, 'remote-stop', { transaction_id: k.open_transaction.transaction_id }));
  }
  for (const r of c.reservations || []) td.append(button(`Cancel reservation ${r.reservation_id}`, 'cancel-reservation', { reservation_id: r.reservation_id }));
  return td;
}

async function operate(chargePointId, operation, body) {
  const out = document.getElementById('operation-result');
  const token = document.getElementById('operator-token').value.trim();
  out.textContent = `${operation} ${chargePointId}: sending…`;
  try {
    const res = await fetch(`/api/v1/chargers/${encodeURIComponent(chargePointId)}/${operation}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
      body: JSON.stringify(body),
      cache: 'no-store',
    });
    const json = await res.json();
    out.dataset.status = String(res.status);
    out.textContent = res.ok ? `${operation} ${chargePointId}: ${JSON.stringify(json.answer)}` : `${operation} ${chargePointId} refused (${res.status}): ${json.detail}`;
  } catch (err) {
    out.dataset.status = 'error';
    out.textContent = `${operation} ${chargePointId}: ${err.message}`;
  }
}

/** The last session, and what its signed meter values came to (verified, or why not: never billed silently). */
function lastSessionCell(c) {
  const td = el('td', { class: 'last-session' }, lastSession(c.last_session));
  const s = c.last_signed_meter;
  if (s) td.append(el('div', { class: s.outcome === 'verified' ? 'signed-meter' : 'signed-meter warn', 'data-outcome': s.outcome, title: s.reason }, `signed meter values of transaction ${s.transaction_id}: ${s.outcome}${s.outcome === 'verified' ? '' : ` (${s.reason})`}`));
  return td;
}

/** The charger's last completed session: energy, what it cost, and against charging immediately. */
function lastSession(s) {
  if (!s) return '—';
  const head = `${s.session}${s.planned ? ' (planned)' : ''}`;
  if (s.actual_cost === null) return `${head}: not priced yet (${s.unpriced_reason})`;
  const money = (v) => `${fmt(v, 2)} ${s.currency}`;
  return `${head}: ${fmt(s.energy_wh / 1000, 2)} kWh, ${money(s.actual_cost)}; immediately ${money(s.immediate_cost)}, saved ${money(s.saving)}`;
}

function renderDl(dl, rows) {
  dl.replaceChildren();
  for (const [k, v] of rows) {
    dl.append(el('dt', {}, k));
    const dd = el('dd');
    if (v instanceof Node) dd.append(v);
    else dd.textContent = v;
    dl.append(dd);
  }
}

/** Every broker node: the one in use, the ones that failed last and why. */
function nodeList(nodes) {
  const list = el('ul', { id: 'broker-nodes' });
  for (const n of nodes) {
    const why = n.state === 'failed' ? `failed ${n.last_failed_at || ''}: ${n.last_error}` : n.state === 'current' ? 'in use' : 'standby';
    list.append(el('li', { 'data-node': n.node, 'data-state': n.state }, `${n.node} — ${why}${n.failures ? ` (${n.failures} failure(s))` : ''}`));
  }
  return list;
}

function renderUplink(u, broker, nowMs) {
  // Coloured by the broker's health, not its link: away while the outbox buffers is degraded (yellow).
  renderDl(document.getElementById('uplink'), [
    ['Broker', badge(u.state, broker && broker.status)],
    ['Address', u.broker || '—'],
    ['Backlog', `${u.outbox_depth} message(s)${u.oldest_age_s !== null ? `, oldest ${u.oldest_age_s} s` : ''}`],
    ['Last published', ago(u.last_published_at, nowMs)],
    ['Last error', u.last_error || '—'],
    ...(u.nodes && u.nodes.length > 1 ? [['Nodes', nodeList(u.nodes)]] : []),
    ['Held', u.held_messages ? `${u.held_messages} message(s): ${u.refusals}` : (u.refusals || '—')],
  ]);
}

function renderHealth(report) {
  const h = report.health;
  const top = document.getElementById('health');
  top.className = `badge ${h.status}`;
  top.textContent = h.status === 'ok' ? 'healthy' : h.status;
  // One line per component, in the words and colours /healthz uses.
  const rows = Object.entries(h.components).map(([name, c]) => {
    const line = el('span', { 'data-component': name });
    line.append(badge(c.status), el('span', { class: 'muted' }, ` ${c.reason}`));
    return [name, line];
  });
  renderDl(document.getElementById('components'), [...rows, ['Live', h.live ? 'yes' : 'no'], ['Ready', h.ready ? 'yes' : 'no']]);
  const ul = document.getElementById('reasons');
  ul.replaceChildren(...h.reasons.map((r) => el('li', {}, r)));
}

/** One inline SVG per region: market prices as steps, forecast as a dashed step line inside its band. */
function priceChart(region, nowMs) {
  const W = 900, H = 260, L = 48, R = 10, T = 10, B = 28;
  const periods = region.periods.map((p) => ({ ...p, start: Date.parse(p.period_start), end: Date.parse(p.period_start) + p.duration_s * 1000 }));
  const box = el('div', { class: 'chart-box', 'data-region': region.region });
  box.append(el('h3', { style: 'font-size:.9rem;margin:.5rem 0 .25rem' }, `${region.region} (${region.currency}/MWh)`));
  if (periods.length === 0) {
    box.append(el('p', { class: 'muted' }, 'No prices stored for today yet.'));
    return box;
  }
  const x0 = periods[0].start, x1 = periods[periods.length - 1].end;
  const values = periods.flatMap((p) => [p.price_per_mwh, p.forecast, p.forecast_lower, p.forecast_upper]).filter((v) => v !== null);
  let lo = Math.min(0, ...values), hi = Math.max(...values, 1);
  const pad = (hi - lo) * 0.05; lo -= pad; hi += pad;
  const x = (t) => L + ((t - x0) / (x1 - x0)) * (W - L - R);
  const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  const s = svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Day-ahead prices ${region.region}` });

  // grid and y labels
  const step = niceStep((hi - lo) / 5);
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) {
    s.append(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: v === 0 ? '#8c959f' : '#eaeef2' }));
    s.append(svg('text', { x: L - 4, y: y(v) + 4, 'text-anchor': 'end' }, Math.round(v)));
  }
  // x labels every 6 hours, local time of the viewer
  for (let t = Math.ceil(x0 / 3_600_000) * 3_600_000; t < x1; t += 3_600_000) {
    const d = new Date(t);
    if (d.getHours() % 6 !== 0) continue;
    s.append(svg('line', { x1: x(t), x2: x(t), y1: T, y2: H - B, stroke: d.getHours() === 0 ? '#8c959f' : '#eaeef2' }));
    const label = d.getHours() === 0 ? d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric' }) : `${String(d.getHours()).padStart(2, '0')}:00`;
    s.append(svg('text', { x: x(t) + 2, y: H - B + 14 }, label));
  }
  // forecast band
  const band = periods.filter((p) => p.price_per_mwh === null && p.forecast_lower !== null && p.forecast_upper !== null);
  if (band.length > 0) {
    const upper = band.flatMap((p) => [`${x(p.start)},${y(p.forecast_upper)}`, `${x(p.end)},${y(p.forecast_upper)}`]);
    const lower = band.slice().reverse().flatMap((p) => [`${x(p.end)},${y(p.forecast_lower)}`, `${x(p.start)},${y(p.forecast_lower)}`]);
    s.append(svg('polygon', { class: 'band', points: [...upper, ...lower].join(' '), fill: 'rgba(191,135,0,.2)', stroke: 'none' }));
  }
  const stepPath = (key) => {
    let d = '';
    let prevEnd = null;
    for (const p of periods) {
      const v = p[key];
      if (v === null || (key === 'forecast' && p.price_per_mwh !== null)) { prevEnd = null; continue; }
      d += `${prevEnd === p.start ? 'L' : 'M'}${x(p.start)},${y(v)}L${x(p.end)},${y(v)}`;
      prevEnd = p.end;
    }
    return d;
  };
  const actual = stepPath('price_per_mwh');
  if (actual) s.append(svg('path', { class: 'actual', d: actual, fill: 'none', stroke: '#0969da', 'stroke-width': 2 }));
  const forecast = stepPath('forecast');
  if (forecast) s.append(svg('path', { class: 'forecast', d: forecast, fill: 'none', stroke: '#bf8700', 'stroke-width': 2, 'stroke-dasharray': '5 3' }));
  if (nowMs >= x0 && nowMs <= x1) {
    s.append(svg('line', { class: 'now', x1: x(nowMs), x2: x(nowMs), y1: T, y2: H - B, stroke: '#cf222e', 'stroke-width': 1.5 }));
    s.append(svg('text', { x: x(nowMs) + 3, y: T + 10, fill: '#cf222e' }, 'now'));
  }
  box.append(s);
  return box;
}

function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

function render(report) {
  const nowMs = Date.parse(report.generated_at);
  document.getElementById('gateway').textContent = `${report.gateway.id || ''} · v${report.gateway.software_version} · up ${Math.round(report.gateway.uptime_s / 60)} min`;
  document.getElementById('updated').textContent = `updated ${new Date(nowMs).toLocaleTimeString()}`;
  renderMeters(report.meters, nowMs);
  renderChargers(report.chargers, nowMs);
  renderPlans(report.chargers, nowMs);
  renderUplink(report.uplink, report.health.components.broker, nowMs);
  renderHealth(report);
  document.getElementById('charts').replaceChildren(...report.prices.map((r) => priceChart(r, nowMs)));
  document.body.dataset.rendered = report.generated_at;
}

async function refresh() {
  try {
    const res = await fetch('/status.json', { cache: 'no-store' });
    if (!res.ok) throw new Error(`/status.json: HTTP ${res.status}`);
    render(await res.json());
    document.getElementById('error').textContent = '';
  } catch (err) {
    document.getElementById('error').textContent = `cannot reach the daemon: ${err.message}`;
  }
}

refresh();
setInterval(refresh, 5000);
