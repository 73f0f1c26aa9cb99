'use strict';
// Shared by every page: element building (no innerHTML, so API strings are
// never markup), API calls whose errors reach the page, and the header.

// h builds an element: attrs are properties (class as className) or, for
// names with a dash, attributes; children are nodes or strings.
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.includes('-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...children.flat().filter(c => c !== null && c !== undefined));
  return e;
}

// getJSON fetches an API answer; a non-2xx answer throws its JSON error
// message (with the status), so that pages show it rather than fail silently.
async function getJSON(url) {
  let r;
  try {
    r = await fetch(url, {headers: {Accept: 'application/json'}});
  } catch (e) {
    throw new Error(`${url}: the server did not answer (${e.message})`);
  }
  const text = await r.text();
  let body;
  try { body = JSON.parse(text); } catch { body = null; }
  if (!r.ok) {
    const msg = body && body.error ? `${body.error.message} (${body.error.code})` : text.trim() || r.statusText;
    const retry = r.headers.get('Retry-After');
    throw new Error(`${r.status}: ${msg}` + (retry ? ` Retry in ${retry} s.` : ''));
  }
  if (body === null) throw new Error(`${url}: the answer is not JSON`);
  return body;
}

// showError puts err in an alert region (the page's by default), or
// clears it (err null).
function showError(err, id = 'error') {
  document.getElementById(id).textContent = err ? err.message : '';
}

function thumbURL(id) { return '/v1/images/' + encodeURIComponent(id) + '/thumbnail'; }
function userURL(id) { return '/users/' + encodeURIComponent(id); }
function fmt(x, digits = 3) { return Number(x).toFixed(digits); }

// The header, the same on every page: links, and a box that opens a user page.
(function header() {
  const link = (href, text) => h('a', {href, 'aria-current': location.pathname === href ? 'page' : null}, text);
  const form = h('form', {role: 'search', 'aria-label': 'open a user page'},
    h('input', {name: 'user', placeholder: 'user id, e.g. u001', 'aria-label': 'user id', size: 14}),
    h('button', {}, 'Open user'));
  form.addEventListener('submit', e => {
    e.preventDefault();
    const id = form.elements.user.value.trim();
    if (id) location.href = userURL(id);
  });
  document.body.prepend(h('header', {}, h('nav', {'aria-label': 'main'},
    h('a', {class: 'brand', href: '/'}, 'kernelrank'), link('/', 'Search'), link('/learners', 'Learners'), form)));
})();

// Feedback: each list a page draws is reported to POST /v1/events as
// impressions (the items shown, with their ranks), and a click on one of
// its items as a click, with the session id this tab keeps. Sending never
// disturbs the page: a failure is dropped.
const feedbackSession = (() => {
  let s = sessionStorage.getItem('kernelrank-session');
  if (!s) {
    s = crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now();
    sessionStorage.setItem('kernelrank-session', s);
  }
  return s;
})();

// sendEvents posts events in batches of at most 100 (the server's limit);
// keepalive lets a click's report outlive the page it leaves.
function sendEvents(events, keepalive = false) {
  const posts = [];
  for (let i = 0; i < events.length; i += 100) {
    posts.push(fetch('/v1/events', {method: 'POST', headers: {'Content-Type': 'application/json'}, keepalive,
      body: JSON.stringify({events: events.slice(i, i + 100)})}).catch(() => null));
  }
  return Promise.all(posts);
}

// recordList reports the impressions of a list just drawn in container:
// items are {item, rank} in the order of its children, context says what
// ranked it ({query, rerank} or {user, model_version}). A click on an
// element matching selector inside a child is then reported as a click on
// that child's item.
function recordList(container, selector, surface, context, items) {
  const base = {surface, ...context, session: feedbackSession};
  container.feedback = {base, items, selector};
  if (!container.dataset.feedback) {
    container.dataset.feedback = 'on';
    container.addEventListener('click', recordClick);
  }
  const now = new Date().toISOString();
  return sendEvents(items.map(x => ({...base, kind: 'impression', item: x.item, rank: x.rank, client_time: now})));
}

function recordClick(e) {
  const {base, items, selector} = e.currentTarget.feedback;
  const target = e.target.closest(selector);
  if (!target) return;
  const i = [...e.currentTarget.children].findIndex(c => c.contains(target));
  if (i < 0 || !items[i]) return;
  sendEvents([{...base, kind: 'click', item: items[i].item, rank: items[i].rank, client_time: new Date().toISOString()}], true);
}
