'use strict';
const id = decodeURIComponent(location.pathname.replace(/^\/users\//, ''));
const api = '/v1/users/' + encodeURIComponent(id);
const opts = document.getElementById('options');
document.title = `kernelrank: user ${id}`;
document.getElementById('title').textContent = `User ${id}`;

const userLinks = ids => ids.map(u => h('a', {href: userURL(u)}, u)).flatMap((a, i) => i ? [', ', a] : [a]);
const chips = xs => xs.length ? h('ul', {class: 'chips'}, xs.map(x => h('li', {}, x))) : h('span', {class: 'muted'}, 'none');

function profile(p) {
  const rows = [['friends', p.friends.length ? userLinks(p.friends) : 'none'], ['groups', chips(p.groups)],
    ['tags', chips(p.tags)], ['places', chips(p.places)], ['photos', String(p.photos)], ['faves', String(p.faves)]];
  document.getElementById('profile').replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

// bar draws v on a scale where max fills half the width, from a centre axis.
function bar(v, max, kind) {
  const w = max > 0 ? 50 * Math.abs(v) / max : 0;
  const span = h('span', {class: kind || (v < 0 ? 'neg' : '')});
  span.style.left = (v < 0 ? 50 - w : 50) + '%';
  span.style.width = w + '%';
  return h('div', {class: 'bar', 'aria-hidden': 'true'}, span);
}

const signed = v => (v >= 0 ? '+' : '') + fmt(v);

// table draws named values as bars on one scale, the sum in its caption.
function table(caption, rows, max) {
  return h('table', {class: 'bars'}, h('caption', {}, caption),
    h('tbody', {}, rows.map(([name, v, kind, title]) =>
      h('tr', {title: title || ''}, h('th', {scope: 'row'}, name), h('td', {}, bar(v, max, kind)), h('td', {class: 'num'}, signed(v))))));
}

// relativeRows are the bars a person reads: each kind of evidence's part
// of the log-odds against a typical candidate, then the import pairs'.
const relativeRows = r => [...r.modalities.map(m => [m.modality, m.relative, '', 'kernels: ' + m.kernels.join(', ')]),
  ['similar pairs', r.pairs_relative, 'fixed', 'import pairs: training pairs like this one']];

// exactRows are the log-odds f in its exact parts: intercept, import pairs,
// then each base kernel's term (its coefficient in f times its value).
function exactRows(r) {
  const rows = [['intercept', r.intercept, 'fixed'], ['import pairs', r.pairs, 'fixed']];
  if (r.kernel_term) rows.push(['combined kernel', r.kernel_term, 'fixed']);
  for (const c of r.contributions) rows.push([c.kernel, c.term, '', `coefficient ${fmt(c.coefficient)}, combination weight ${fmt(c.weight)}`]);
  return rows;
}

function friends(j) {
  const most = (rows, items) => Math.max(0, ...items.flatMap(r => rows(r).map(x => Math.abs(x[1]))));
  const max = most(relativeRows, j.items), maxExact = most(exactRows, j.items);
  document.getElementById('friends-meta').textContent = j.reason ||
    `Ranked by ${j.learner}'s model ${j.model_version}. Strength: the probability of friendship. ` +
    `Each bar is how much one kind of evidence raises (right) or lowers (left) the log-odds of friendship compared with a typical candidate for ${id}, ` +
    'the average over everyone not yet a friend; evidence the model gives no weight in the log-odds shows 0. The bars add up to the difference. ' +
    '"Exact parts" lists the log-odds term by term.';
  document.getElementById('friends').replaceChildren(...j.items.map(r => h('tr', {},
    h('td', {}, h('a', {href: userURL(r.user)}, r.user),
      h('div', {class: 'tags'}, `${r.common_friend_count} common friend${r.common_friend_count === 1 ? '' : 's'}`)),
    h('td', {class: 'num'}, (100 * r.strength).toFixed(1) + '%'),
    h('td', {},
      table(`against a typical candidate: ${signed(r.log_odds - r.typical_log_odds)}`, relativeRows(r), max),
      h('details', {}, h('summary', {}, 'Exact parts'), table(`log-odds f = ${fmt(r.log_odds)}`, exactRows(r), maxExact))))));
}

// groupWhy says in words what the group scorer read: its one signal, or
// learned's signals that raised the score most.
function groupWhy(g) {
  const friends = g.friend_count ? `${g.friend_count} of ${id}'s friends ${g.friend_count === 1 ? 'is' : 'are'} in it` : `none of ${id}'s friends is in it`;
  if (g.signals.length === 1) return `Scored by ${g.scorer}; ${friends}.`;
  const up = g.signals.filter(s => s.part > 0).slice(0, 3).map(s => `${s.signal} ${signed(s.part)}`);
  return `Scored by ${g.scorer}, mostly ${up.length ? up.join(', ') : 'nothing positive'}; ${friends}.`;
}

function groups(j) {
  const rows = j.items.map(g => h('tr', {}, h('td', {}, g.group, h('div', {class: 'tags why'}, groupWhy(g))), h('td', {class: 'num'}, fmt(g.score, 2)),
    h('td', {class: 'num'}, String(g.members)), h('td', {}, g.friends.length ? userLinks(g.friends) : h('span', {class: 'muted'}, 'none'))));
  if (j.reason) rows.push(h('tr', {}, h('td', {colSpan: 4, class: 'muted'}, j.reason)));
  document.getElementById('groups').replaceChildren(...rows);
}

// show runs one request and draws its answer, or shows its error in place.
async function show(url, draw, errorId, body) {
  showError(null, errorId);
  try {
    draw(await getJSON(url));
  } catch (err) {
    document.getElementById(body).replaceChildren();
    showError(err, errorId);
  }
}

// recordSuggestions reports the suggestions of answer j drawn in the rows
// of tbody (surface friends or groups, the item's id under key); a click
// on a row's first cell is a click on it.
function recordSuggestions(tbody, surface, key, j) {
  return recordList(document.getElementById(tbody), 'td:first-child', surface, {user: j.user, model_version: j.model_version},
    j.items.map((x, i) => ({item: x[key], rank: i + 1})));
}

function recommend() {
  const q = new URLSearchParams({k: opts.elements.k.value, learner: opts.elements.learner.value});
  history.replaceState(null, '', '?' + q);
  return Promise.all([
    show(`${api}/friends?${q}`, j => { friends(j); recordSuggestions('friends', 'friends', 'user', j); }, 'friends-error', 'friends'),
    show(`${api}/groups?${new URLSearchParams({learner: q.get('learner')})}`,
      j => { groups(j); recordSuggestions('groups', 'groups', 'group', j); }, 'groups-error', 'groups')]);
}

opts.addEventListener('submit', e => { e.preventDefault(); recommend(); });

// Editing the user's friendships and groups (admin). The token is kept for
// the browser tab only.
const edit = document.getElementById('edit');
const tokenKey = 'kernelrank-admin-token';

// editSocial sends one change, e.g. "PUT friends" with the friend field,
// then shows the profile and the suggestions as they are now.
async function editSocial(action) {
  const [method, kind] = action.split(' ');
  const other = edit.elements[kind === 'friends' ? 'friend' : 'group'].value.trim();
  const token = edit.elements.token.value.trim();
  showError(null, 'edit-error');
  document.getElementById('edit-status').textContent = '';
  if (!other || !token) {
    showError(new Error(`Give the admin token and a ${kind === 'friends' ? 'user id' : 'group name'}.`), 'edit-error');
    return;
  }
  sessionStorage.setItem(tokenKey, token);
  try {
    const r = await fetch(`${api}/${kind}/${encodeURIComponent(other)}`, {method, headers: {Authorization: 'Bearer ' + token, Accept: 'application/json'}});
    const body = await r.json().catch(() => null);
    if (!r.ok) throw new Error(`${r.status}: ${body && body.error ? body.error.message : r.statusText}`);
    profile(await getJSON(api));
    await recommend();
    document.getElementById('edit-status').textContent =
      `${method === 'PUT' ? 'Added' : 'Removed'} ${kind === 'friends' ? 'friend' : 'group'} ${other}; data version ${body.data_version}.`;
  } catch (err) {
    showError(err, 'edit-error');
  }
}

edit.elements.token.value = sessionStorage.getItem(tokenKey) || '';
edit.addEventListener('click', e => { if (e.target.matches('button')) editSocial(e.target.value); });
edit.addEventListener('submit', e => e.preventDefault());

(async function start() {
  const q = new URLSearchParams(location.search);
  try {
    const [p, l] = await Promise.all([getJSON(api), getJSON('/v1/learners')]);
    profile(p);
    const want = q.get('learner') || l.default_recommend;
    for (const s of l.recommend) opts.elements.learner.add(new Option(s, s, false, s === want));
  } catch (err) {
    showError(err);
    return;
  }
  if (q.get('k')) opts.elements.k.value = q.get('k');
  recommend();
})();
