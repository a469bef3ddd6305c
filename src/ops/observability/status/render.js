// The status page's view: /status.json's report -> a tree of plain nodes, used twice.
// The daemon serialises it into the first HTML (GET /status), so curl, a text browser or a
// screenshot taken before any script ran shows the data; the page's script (status.js)
// builds DOM nodes from the same tree every few seconds. Plain JavaScript without
// dependencies (browsers load it as it is); text is escaped on the server and set through
// textContent in the browser, never parsed as HTML. Types: render.d.ts.

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An element: tag, attributes (null/false leave one out), children (nodes or text). `live`: the browser refreshes it by id. */
export function h(tag, attrs, ...children) {
  return { tag, attrs: attrs || {}, children: children.flat().filter((c) => c !== null && c !== undefined && c !== false) };
}

function s(tag, attrs, ...children) {
  return { ...h(tag, attrs, ...children), ns: SVG_NS };
}

/** A container the browser refreshes: its attributes always, its children unless `attrsOnly`. */
function live(node, attrsOnly) {
  return { ...node, live: attrsOnly ? 'attrs' : 'all' };
}

// ---- HTML text on the server -------------------------------------------------------------

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
const VOID = new Set(['input', 'meta', 'link', 'br']);

export function toHtml(node) {
  if (typeof node === 'string' || typeof node === 'number') return escapeHtml(node);
  const attrs = Object.entries(node.attrs)
    .filter(([, v]) => v !== null && v !== undefined && v !== false)
    .map(([k, v]) => (v === true ? ` ${k}` : ` ${k}="${escapeHtml(v)}"`))
    .join('');
  if (VOID.has(node.tag)) return `<${node.tag}${attrs}>`;
  return `<${node.tag}${attrs}>${node.children.map(toHtml).join('')}</${node.tag}>`;
}

// ---- formatting --------------------------------------------------------------------------

function ago(iso, nowMs) {
  if (!iso) return '—';
  const sec = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  if (sec < 90) return `${sec} s ago`;
  if (sec < 5400) return `${Math.round(sec / 60)} min ago`;
  return `${Math.round(sec / 3600)} h ago`;
}

function metric(list, name) {
  const m = list.find((x) => x.name === name);
  return m ? m.value : null;
}

function fmt(v, digits) {
  return v === null || v === undefined ? '—' : Number(v).toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A coloured label; the colour is the state's own, or the health status given (ok, degraded, down). */
function badge(state, status) {
  return h('span', { class: `badge ${status || state}` }, state);
}

// ---- sections ----------------------------------------------------------------------------

function demandLine(d) {
  const parts = [];
  if (d.quarter_hour_average_kw !== null) parts.push(`quarter-hour ${fmt(d.quarter_hour_average_kw, 3)} kW`);
  if (d.month_peak) parts.push(`month's peak ${fmt(d.month_peak.kw, 3)} kW${d.month_peak.at ? ` at ${d.month_peak.at.slice(0, 16).replace('T', ' ')}Z` : ''}`);
  if (d.history.length > 0) parts.push(`earlier months ${d.history.map((p) => `${p.month ?? '?'}: ${fmt(p.kw, 3)}`).join(', ')} kW`);
  return parts.join(' · ');
}

function meterRows(meters, nowMs) {
  if (meters.length === 0) return [h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No meters configured.'))];
  return meters.map((m) => {
    const power = metric(m.metrics, 'total_active_power');
    const energy = metric(m.metrics, 'active_energy_import');
    const others = m.metrics.filter((x) => x.name !== 'total_active_power' && x.name !== 'active_energy_import').map((x) => `${x.name} ${fmt(x.value, 2)} ${x.unit}`);
    const state = h(
      'td',
      {},
      badge(m.state),
      m.consecutive_misses > 0 ? h('span', { class: 'muted' }, ` ${m.consecutive_misses} missed`) : null,
      // Why a P1 meter's telegrams give no sample, with the fix (one line from the source).
      m.problem ? h('div', { class: 'muted meter-problem' }, m.problem) : null,
      // A Belgian P1 meter's capacity objects (1-0:1.4.0, 1-0:1.6.0, 0-0:98.1.0): shown here, not published upstream.
      m.demand ? h('div', { class: 'muted meter-demand' }, demandLine(m.demand)) : null,
    );
    return h(
      'tr',
      { 'data-resource': m.resource_id },
      h('td', { title: m.resource_id }, m.resource_id.slice(0, 8)),
      h('td', {}, `${m.bus} / ${m.unit_id}`),
      h('td', {}, m.profile),
      state,
      h('td', { class: 'num power' }, power === null ? '—' : `${fmt(power, 0)} W`),
      h('td', { class: 'num' }, energy === null ? '—' : `${fmt(energy / 1000, 1)} kWh`),
      h('td', { class: 'muted' }, others.join(', ') || '—'),
      h('td', { class: 'muted' }, ago(m.last_answered_at, nowMs)),
    );
  });
}

/**
 * A charger's state in the words and colour of the Health box: "connected" (green), or
 * "not connected" in the colour Health gives the chargers component — grey while Health
 * says ok (a charger asleep or away is normal; "0 of 1 charge point(s) connected" there),
 * never a red "disconnected" beside a green Health line.
 */
function chargerBadge(c, chargersHealth) {
  if (c.state === 'connected') return badge('connected');
  const status = chargersHealth && chargersHealth.status !== 'ok' ? chargersHealth.status : 'not-connected';
  return h('span', { class: `badge ${status}` }, 'not connected');
}

function chargerRows(chargers, chargersHealth, nowMs) {
  return chargers.map((c) => {
    const connectors = c.connectors
      .map((k) => `${k.connector_id}: ${k.status}${k.error_code !== 'NoError' ? ` (${k.error_code})` : ''}${k.open_transaction ? `, transaction ${k.open_transaction.transaction_id}` : ''}${k.plan_strategy ? `, plan by ${k.plan_strategy.strategy}` : ''}${k.reservation ? `, reservation ${k.reservation.reservation_id} until ${new Date(k.reservation.expiry_date).toLocaleTimeString()}` : ''}`)
      .join('; ');
    const sessions = c.open_transactions.map((t) => `${t.session} since ${new Date(t.started_at).toLocaleTimeString()}, ${fmt(t.energy_wh / 1000, 2)} kWh`).join('; ');
    const state = h(
      'td',
      {},
      chargerBadge(c, chargersHealth),
      c.clock_ahead_s !== null ? h('span', { class: 'muted clock-ahead' }, ` clock ${c.clock_ahead_s} s ahead`) : null,
      c.clock_problem ? h('div', { class: 'muted clock-problem' }, c.clock_problem) : null,
    );
    return h(
      'tr',
      { 'data-charger': c.charge_point_id },
      h('td', {}, c.charge_point_id),
      state,
      modelCell(c),
      h('td', {}, connectors || '—'),
      h('td', {}, sessions || '—'),
      lastSessionCell(c),
      h('td', { class: 'muted' }, ago(c.last_message_at, nowMs)),
      operationsCell(c),
    );
  });
}

/** Each planned connector: its target, the schedule sent to its charger (with the charger's answer) and the limit in force now. */
function planRows(chargers, nowMs) {
  const time = (iso) => new Date(iso).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' });
  return chargers.flatMap((c) =>
    (c.plans || []).map((p) => {
      const t = p.target;
      const target = t ? `${fmt(t.energy_wh / 1000, 1)} kWh by ${time(t.departure_time)} (${t.source})${t.ended_at ? `, ended ${time(t.ended_at)}` : ''}` : '—';
      const sent = p.charger_profile;
      const schedule = sent ? `${sent.purpose} ${sent.status}, sent ${ago(sent.sent_at, nowMs)}: ${sent.periods.map((x) => `${time(x.start)} ${fmt(x.limit, 1)} ${sent.rate_unit}`).join(', ')}; until ${time(sent.ends_at)}` : 'none sent yet';
      let now = '—';
      if (sent && nowMs < Date.parse(sent.ends_at)) for (const x of sent.periods) if (Date.parse(x.start) <= nowMs) now = `${fmt(x.limit, 1)} ${sent.rate_unit}`;
      return h('tr', { 'data-plan': `${c.charge_point_id}/${p.connector_id}` }, h('td', {}, `${c.charge_point_id} / ${p.connector_id}`), h('td', {}, target), h('td', { class: 'schedule' }, schedule), h('td', { class: 'num' }, now));
    }),
  );
}

/** The fuse controller's connectors: health (and why), share, the limit the charger confirmed (or why unknown), what the site counts it at, its last attempt and escalation. */
function fuseRows(fuse, nowMs) {
  const state = { settled: 'ok', lowering: 'degraded', escalating: 'down', uncontrollable: 'down' };
  return (fuse || []).map((f) => {
    const a = f.last_attempt;
    const e = f.last_escalation;
    return h(
      'tr',
      { 'data-fuse': `${f.charge_point_id}/${f.connector_id}` },
      h('td', {}, `${f.charge_point_id} / ${f.connector_id}`),
      h('td', {}, badge(f.inoperative_by_fuse ? 'set Inoperative' : f.health, f.inoperative_by_fuse ? 'down' : state[f.health] || 'degraded'), f.health === 'settled' ? null : h('div', { class: 'muted' }, f.why)),
      h('td', { class: 'num' }, f.share_a === null ? '—' : `${fmt(f.share_a, 1)} A`),
      h('td', { class: 'num' }, f.in_force_a === null ? `unknown (${f.in_force_unknown})` : `${fmt(f.in_force_a, 1)} A`),
      h('td', { class: 'num' }, `${fmt(f.counted_a, 1)} A`),
      h('td', {}, a ? `${a.means} ${a.outcome}${a.answer && a.answer !== 'Accepted' ? ` (${a.answer})` : ''}, ${ago(a.sent_at, nowMs)}` : '—'),
      h('td', {}, e ? `${e.means} ${ago(e.at, nowMs)}: ${e.why}` : '—'),
    );
  });
}

/** The grid operator's dimming (§14a, docs/grid-limits.md): the input and its state, the limit in force, and the event in force with each connector's limit and confirmation. */
function gridRows(g, nowMs) {
  if (!g) return [];
  const row = (k, ...v) => [h('dt', {}, k), h('dd', {}, ...v)];
  const e = g.event;
  const signal = g.signal === 'lost' ? badge('signal lost', 'down') : g.signal === 'read' ? badge('read', 'ok') : badge('not read yet', 'degraded');
  return [
    ...row('Input', g.input),
    ...row('Signal', signal, g.signal_reason ? h('div', { class: 'muted' }, `${g.signal_reason} (on_signal_lost: ${g.on_signal_lost})`) : null),
    ...row('Contacts', g.contacts ? g.contacts.map((c) => (c ? 'closed' : 'open')).join(', ') : '—'),
    ...row('Dimmed', g.dimmed ? badge(`to ${fmt(g.limit_w / 1000, 2)} kW`, 'degraded') : 'no', h('span', { class: 'muted' }, ` · P_min,14a ${fmt(g.minimum_w / 1000, 2)} kW, fixed loads ${fmt(g.fixed_loads_w / 1000, 2)} kW`)),
    ...(e
      ? row(
          `Event ${e.id}`,
          `since ${ago(e.started_at, nowMs)} (${e.cause}); `,
          e.confirmed_at ? `every connector confirmed ${ago(e.confirmed_at, nowMs)}` : 'not confirmed yet',
          e.late ? badge('late', 'down') : null,
          h('ul', {}, e.connectors.map((c) => h('li', { 'data-grid-connector': `${c.charge_point_id}/${c.connector_id}` }, `${c.charge_point_id} / ${c.connector_id}: share ${c.share_a === null ? '—' : `${fmt(c.share_a, 1)} A`}, in force ${c.in_force_a === null ? 'unknown' : `${fmt(c.in_force_a, 1)} A`}, ${c.confirmed_at ? `confirmed ${ago(c.confirmed_at, nowMs)}` : 'not confirmed'}`))),
        )
      : []),
  ];
}

/** Vendor and model, its OCPP version, firmware and the feature profiles it declared. */
function modelCell(c) {
  const strategies = (c.plan_strategies || []).map((x) => `${x.connector_id}: ${x.strategy} (${x.reason})`);
  return h(
    'td',
    {},
    [c.vendor, c.model].filter(Boolean).join(' ') || '—',
    c.ocpp_version ? h('div', { class: 'muted ocpp-version' }, `OCPP ${c.ocpp_version}`) : null,
    c.firmware_version ? h('div', { class: 'muted firmware' }, `firmware ${c.firmware_version}`) : null,
    c.supported_profiles ? h('div', { class: 'muted profiles' }, c.supported_profiles.join(', ') || 'no feature profiles') : null,
    c.device_model ? h('div', { class: 'muted device-model' }, deviceModelLine(c.device_model)) : null,
    strategies.length > 0 ? h('div', { class: 'muted strategies', title: 'plan strategy in force' }, `plan: ${strategies.join('; ')}`) : null,
  );
}

/** An OCPP 2.0.1 station's device model in a line: how much is stored, and its newest report. */
function deviceModelLine(d) {
  const r = d.last_report;
  if (!r) return `device model: ${d.rows} variable attribute(s), no report asked for yet`;
  const state = r.complete ? 'complete' : r.status === null || r.status === 'Accepted' ? 'parts missing or still coming' : `answered ${r.status}`;
  return `device model: ${d.rows} variable attribute(s); last report ${r.report_base ?? 'unasked'} ${state}${r.at ? ` (${r.at})` : ''}`;
}

/**
 * The operations, as buttons status.js sends through the HTTP API with the operator's cpo
 * token (the page has no way around the API's token check). Every one needs the charger
 * connected, so a charger that is not is offered none.
 */
function operationsCell(c) {
  if (c.state !== 'connected') return h('td', { class: 'operations muted' }, 'none while not connected');
  // A 2.0.1 station takes only the operations with a 2.0.1 form (`operations`, OCPP 1.6 names): any other the API would answer 409 (docs/chargers.md "OCPP 2.0.1").
  const takes = (action) => !c.operations || c.operations.includes(action);
  const button = (label, operation, action, body) => (takes(action) ? h('button', { type: 'button', 'data-operation': operation, 'data-charger': c.charge_point_id, 'data-body': JSON.stringify(body) }, label) : null);
  const buttons = [
    button('Soft reset', 'reset', 'Reset', { type: 'Soft' }),
    ...c.connectors
      .filter((x) => x.connector_id > 0)
      .flatMap((k) => [button(`Unlock ${k.connector_id}`, 'unlock-connector', 'UnlockConnector', { connector_id: k.connector_id }), k.open_transaction ? button(`Stop ${k.open_transaction.transaction_id}`, 'remote-stop', 'RemoteStopTransaction', { transaction_id: k.open_transaction.transaction_id }) : null]),
    ...(c.reservations || []).map((r) => button(`Cancel reservation ${r.reservation_id}`, 'cancel-reservation', 'CancelReservation', { reservation_id: r.reservation_id })),
  ].filter(Boolean);
  if (buttons.length === 0) return h('td', { class: 'operations muted' }, c.ocpp_version === '2.0.1' ? 'none for OCPP 2.0.1 yet' : 'none');
  return h('td', { class: 'operations' }, ...buttons);
}

/** The last session, and what its signed meter values came to (verified, or why not: never billed silently). */
function lastSessionCell(c) {
  const signed = c.last_signed_meter;
  return h(
    'td',
    { class: 'last-session' },
    lastSession(c.last_session),
    signed ? h('div', { class: signed.outcome === 'verified' ? 'signed-meter' : 'signed-meter warn', 'data-outcome': signed.outcome, title: signed.reason }, `signed meter values of transaction ${signed.transaction_id}: ${signed.outcome}${signed.outcome === 'verified' ? '' : ` (${signed.reason})`}`) : null,
    securityEvent(c.last_security_event),
    ...(c.external_limits || []).map(externalLimit),
  );
}

/** A limit another system set on the station (its EMS, the grid operator): its plans stay within it. */
function externalLimit(l) {
  const where = l.evse_id === 0 ? 'the station' : `EVSE ${l.evse_id}`;
  return h('div', { class: l.grid_critical ? 'external-limit warn' : 'external-limit', 'data-evse': String(l.evse_id) }, `external limit (${l.source}) on ${where}: ${l.limit_a_now === null ? 'none in force now' : `${fmt(l.limit_a_now, 1)} A now`}, since ${l.received_at}`);
}

/** What a severity is called on the page (ocpp/security-event-severity.ts). */
const SECURITY_EVENT_SEVERITY_TEXT = { critical: 'critical', routine: 'routine', unknown: 'not in the specification' };

/**
 * The last security event the station reported (all of them: GET /api/v1/chargers/{id}/security_events):
 * a warning only if the specification marks its type critical; a routine or a vendor's own type is information.
 */
function securityEvent(e) {
  if (!e) return null;
  const severity = SECURITY_EVENT_SEVERITY_TEXT[e.severity] ?? e.severity;
  return h('div', { class: e.severity === 'critical' ? 'security-event warn' : 'security-event muted', 'data-type': e.type, 'data-severity': e.severity, title: e.tech_info || '' }, `security event ${e.type} (${severity}) at ${e.occurred_at}${e.tech_info ? ` (${e.tech_info})` : ''}; ${e.kept} kept`);
}

/** The charger's last completed session: energy, what it cost, and against charging immediately. */
function lastSession(x) {
  if (!x) return '—';
  const head = `${x.session}${x.planned ? ' (planned)' : ''}`;
  if (x.actual_cost === null) return `${head}: not priced yet (${x.unpriced_reason})`;
  const money = (v) => `${fmt(v, 2)} ${x.currency}`;
  return `${head}: ${fmt(x.energy_wh / 1000, 2)} kWh, ${money(x.actual_cost)}; immediately ${money(x.immediate_cost)}, saved ${money(x.saving)}`;
}

function dlRows(rows) {
  return rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]);
}

/** Every broker node: the one in use, the ones that failed last and why. */
function nodeList(nodes) {
  return h(
    'ul',
    { id: 'broker-nodes' },
    nodes.map((n) => {
      const why = n.state === 'failed' ? `failed ${n.last_failed_at || ''}: ${n.last_error}` : n.state === 'current' ? 'in use' : 'standby';
      return h('li', { 'data-node': n.node, 'data-state': n.state }, `${n.node} — ${why}${n.failures ? ` (${n.failures} failure(s))` : ''}`);
    }),
  );
}

function uplinkRows(u, broker, nowMs) {
  // Coloured by the broker's health, not its link: away while the outbox buffers is degraded (yellow).
  return dlRows([
    ['Broker', badge(u.state, broker && broker.status)],
    ['Address', u.broker || '—'],
    ['Backlog', `${u.outbox_depth} message(s)${u.oldest_age_s !== null ? `, oldest ${u.oldest_age_s} s` : ''}`],
    ['Last published', ago(u.last_published_at, nowMs)],
    ['Last error', u.last_error || '—'],
    ...(u.nodes && u.nodes.length > 1 ? [['Nodes', nodeList(u.nodes)]] : []),
    ['Held', u.held_messages ? `${u.held_messages} message(s): ${u.refusals}` : u.refusals || '—'],
  ]);
}

/**
 * One line per component, in the words and colours /healthz uses. /healthz's `reasons` are
 * these same lines of the components that are not ok, so they are not listed again (they
 * were: every degraded component's reason, the forecast's included, was printed twice).
 */
function healthRows(health) {
  const rows = Object.entries(health.components).map(([name, c]) => [name, h('span', { 'data-component': name, 'data-status': c.status }, badge(c.status), h('span', { class: 'muted' }, ` ${c.reason}`))]);
  return dlRows([...rows, ['Live', health.live ? 'yes' : 'no'], ['Ready', health.ready ? 'yes' : 'no']]);
}

function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

/** One inline SVG per region: market prices as steps, forecast as a dashed step line inside its band. */
function priceChart(region, nowMs) {
  const W = 900, H = 260, L = 48, R = 10, T = 10, B = 28;
  const periods = region.periods.map((p) => ({ ...p, start: Date.parse(p.period_start), end: Date.parse(p.period_start) + p.duration_s * 1000 }));
  const title = h('h3', { style: 'font-size:.9rem;margin:.5rem 0 .25rem' }, `${region.region} (${region.currency}/MWh)`);
  if (periods.length === 0) return h('div', { class: 'chart-box', 'data-region': region.region }, title, h('p', { class: 'muted' }, 'No prices stored for today yet.'));
  const x0 = periods[0].start, x1 = periods[periods.length - 1].end;
  const values = periods.flatMap((p) => [p.price_per_mwh, p.forecast, p.forecast_lower, p.forecast_upper]).filter((v) => v !== null);
  let lo = Math.min(0, ...values), hi = Math.max(...values, 1);
  const pad = (hi - lo) * 0.05;
  lo -= pad;
  hi += pad;
  const x = (t) => L + ((t - x0) / (x1 - x0)) * (W - L - R);
  const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  const parts = [];
  // grid and y labels
  const step = niceStep((hi - lo) / 5);
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) {
    parts.push(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: v === 0 ? '#8c959f' : '#eaeef2' }));
    parts.push(s('text', { x: L - 4, y: y(v) + 4, 'text-anchor': 'end' }, String(Math.round(v))));
  }
  // x labels every 6 hours, in the local time of whoever renders (the gateway's in the first HTML, the viewer's after a refresh)
  for (let t = Math.ceil(x0 / 3_600_000) * 3_600_000; t < x1; t += 3_600_000) {
    const d = new Date(t);
    if (d.getHours() % 6 !== 0) continue;
    parts.push(s('line', { x1: x(t), x2: x(t), y1: T, y2: H - B, stroke: d.getHours() === 0 ? '#8c959f' : '#eaeef2' }));
    const label = d.getHours() === 0 ? d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric' }) : `${String(d.getHours()).padStart(2, '0')}:00`;
    parts.push(s('text', { x: x(t) + 2, y: H - B + 14 }, label));
  }
  // forecast band
  const band = periods.filter((p) => p.price_per_mwh === null && p.forecast_lower !== null && p.forecast_upper !== null);
  if (band.length > 0) {
    const upper = band.flatMap((p) => [`${x(p.start)},${y(p.forecast_upper)}`, `${x(p.end)},${y(p.forecast_upper)}`]);
    const lower = band.slice().reverse().flatMap((p) => [`${x(p.end)},${y(p.forecast_lower)}`, `${x(p.start)},${y(p.forecast_lower)}`]);
    parts.push(s('polygon', { class: 'band', points: [...upper, ...lower].join(' '), fill: 'rgba(191,135,0,.2)', stroke: 'none' }));
  }
  const stepPath = (key) => {
    let d = '';
    let prevEnd = null;
    for (const p of periods) {
      const v = p[key];
      if (v === null || (key === 'forecast' && p.price_per_mwh !== null)) {
        prevEnd = null;
        continue;
      }
      d += `${prevEnd === p.start ? 'L' : 'M'}${x(p.start)},${y(v)}L${x(p.end)},${y(v)}`;
      prevEnd = p.end;
    }
    return d;
  };
  const actual = stepPath('price_per_mwh');
  if (actual) parts.push(s('path', { class: 'actual', d: actual, fill: 'none', stroke: '#0969da', 'stroke-width': 2 }));
  const forecast = stepPath('forecast');
  if (forecast) parts.push(s('path', { class: 'forecast', d: forecast, fill: 'none', stroke: '#bf8700', 'stroke-width': 2, 'stroke-dasharray': '5 3' }));
  if (nowMs >= x0 && nowMs <= x1) {
    parts.push(s('line', { class: 'now', x1: x(nowMs), x2: x(nowMs), y1: T, y2: H - B, stroke: '#cf222e', 'stroke-width': 1.5 }));
    parts.push(s('text', { x: x(nowMs) + 3, y: T + 10, fill: '#cf222e' }, 'now'));
  }
  return h('div', { class: 'chart-box', 'data-region': region.region }, title, s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Day-ahead prices ${region.region}` }, parts));
}

// ---- the page ----------------------------------------------------------------------------

/**
 * The page's header and main for a report, or the empty frame for null (no report: the
 * script fills it in). Containers marked live are what the browser refreshes, by id; the
 * rest (the operator token field) stays as the person left it.
 */
export function pageBody(report) {
  const nowMs = report ? Date.parse(report.generated_at) : 0;
  const health = report ? report.health : null;
  const chargers = report ? report.chargers || [] : [];
  const plans = report ? planRows(chargers, nowMs) : [];
  const fuse = report ? fuseRows(report.fuse, nowMs) : [];
  const gateway = report ? `${report.gateway.id || ''} · v${report.gateway.software_version} · up ${Math.round(report.gateway.uptime_s / 60)} min` : '';
  const table = (id, head, rows) => h('table', { id }, h('thead', {}, h('tr', {}, head.map((x) => h('th', {}, x)))), live(h('tbody', { id: `${id}-rows` }, rows)));
  return [
    h(
      'header',
      {},
      h('h1', {}, 'metergate'),
      live(h('span', { id: 'health', class: `badge ${health ? health.status : ''}` }, health ? (health.status === 'ok' ? 'healthy' : health.status) : '…')),
      live(h('span', { id: 'gateway', class: 'muted' }, gateway)),
      live(h('span', { id: 'updated', class: 'muted' }, report ? `updated ${new Date(nowMs).toLocaleTimeString()}` : 'waiting for the first report…')),
      h('span', { id: 'error' }),
    ),
    h(
      'main',
      {},
      h('section', { class: 'wide', id: 'meters-section' }, h('h2', {}, 'Meters'), table('meters', ['Resource', 'Bus / unit', 'Profile', 'State', 'Power', 'Energy import', 'Other values', 'Last answer'], report ? meterRows(report.meters, nowMs) : [])),
      live(
        h(
          'section',
          { class: 'wide', id: 'chargers-section', hidden: chargers.length === 0 },
          h('h2', {}, 'Chargers (OCPP)'),
          h('p', { class: 'muted' }, h('label', {}, 'Operator token (cpo) for the operations: ', h('input', { id: 'operator-token', type: 'password', autocomplete: 'off', size: '30' })), ' ', h('span', { id: 'operation-result', 'aria-live': 'polite' })),
          table('chargers', ['Charge point', 'State', 'Model', 'Connectors', 'Open sessions', 'Last session', 'Last message', 'Operations'], chargerRows(chargers, health && health.components.chargers, nowMs)),
        ),
        true,
      ),
      live(h('section', { class: 'wide', id: 'plans-section', hidden: plans.length === 0 }, h('h2', {}, 'Charging plans'), table('plans', ['Charge point / connector', 'Target', 'Schedule sent to the charger', 'Now'], plans)), true),
      live(h('section', { class: 'wide', id: 'fuse-section', hidden: fuse.length === 0 }, h('h2', {}, 'Fuse controller'), table('fuse', ['Charge point / connector', 'Health', 'Share', 'In force', 'Counted at', 'Last attempt', 'Last escalation'], fuse)), true),
      live(h('section', { class: 'wide', id: 'grid-section', hidden: !(report && report.grid_control) }, h('h2', {}, 'Grid operator dimming (§14a)'), live(h('dl', { id: 'grid' }, report ? gridRows(report.grid_control, nowMs) : []))), true),
      h('section', { id: 'uplink-section' }, h('h2', {}, 'Uplink'), live(h('dl', { id: 'uplink' }, report ? uplinkRows(report.uplink, health.components.broker, nowMs) : []))),
      h('section', { id: 'health-section' }, h('h2', {}, 'Health'), live(h('dl', { id: 'components' }, health ? healthRows(health) : []))),
      h(
        'section',
        { class: 'wide', id: 'prices-section' },
        h('h2', {}, 'Day-ahead prices, today and tomorrow'),
        h(
          'div',
          { class: 'legend muted' },
          h('span', {}, h('i', { class: 'swatch', style: 'background:#0969da' }), 'market price'),
          h('span', {}, h('i', { class: 'swatch', style: 'background:#bf8700' }), 'forecast'),
          h('span', {}, h('i', { class: 'swatch', style: 'background:rgba(191,135,0,.2)' }), 'forecast interval'),
        ),
        live(h('div', { id: 'charts' }, report ? report.prices.map((r) => priceChart(r, nowMs)) : [])),
      ),
    ),
  ];
}

/** The live containers of a tree, each with its id: what the browser puts in place. */
export function liveNodes(nodes, out = []) {
  for (const n of nodes) {
    if (typeof n !== 'object') continue;
    if (n.live) out.push(n);
    liveNodes(n.children, out);
  }
  return out;
}
