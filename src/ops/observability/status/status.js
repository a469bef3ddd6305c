// The status page's live refresh: fetch /status.json every few seconds and put the live
// containers of render.js's tree in place (the first HTML came with the data already, from
// the same renderer on the daemon). DOM nodes are built with textContent only.
import { liveNodes, pageBody } from '/status/render.js';

function toDom(node) {
  if (typeof node === 'string' || typeof node === 'number') return document.createTextNode(String(node));
  const e = node.ns ? document.createElementNS(node.ns, node.tag) : document.createElement(node.tag);
  setAttributes(e, node.attrs);
  for (const c of node.children) e.append(toDom(c));
  return e;
}

function setAttributes(e, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) e.removeAttribute(k);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
}

function render(report) {
  for (const node of liveNodes(pageBody(report))) {
    const target = document.getElementById(node.attrs.id);
    if (!target) continue;
    setAttributes(target, node.attrs);
    if (node.live === 'all') target.replaceChildren(...node.children.map(toDom));
  }
  document.body.dataset.rendered = report.generated_at;
}

/**
 * Operations go through the HTTP API with the operator's cpo token typed into this page
 * (#operator-token, kept in this tab's memory only): the page has no way around the API's
 * token check, so it can do nothing the token may not. One listener for every button,
 * those of the first HTML and of each refresh.
 */
async function operate(chargePointId, operation, body) {
  const out = document.getElementById('operation-result');
  const token = document.getElementById('operator-token').value.trim();
  out.textContent = `${operation} ${chargePointId}: sending…`;
  try {
    const res = await fetch(`/api/v1/chargers/${encodeURIComponent(chargePointId)}/${operation}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
      body,
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

document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-operation]') : null;
  if (button) operate(button.dataset.charger, button.dataset.operation, button.dataset.body);
});

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

setInterval(refresh, 5000);
// The first HTML carries a report already; without one (it could not be built) fetch at once.
if (!document.body.dataset.rendered) refresh();
