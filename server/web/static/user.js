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

// chart is a friend's log-odds f in parts: the intercept and the import
// pairs' part (grey), then each base kernel's term, all on one scale.
function chart(rec, max) {
  const rows = [['intercept', rec.intercept, 'fixed'], ['import pairs', rec.pairs, 'fixed']];
  if (rec.kernel_term) rows.push(['combined kernel', rec.kernel_term, 'fixed']);
  for (const c of rec.contributions) rows.push([c.kernel, c.term]);
  return h('table', {class: 'bars'},
    h('caption', {}, `sum: log-odds f = ${fmt(rec.log_odds)}`),
    h('tbody', {}, rows.map(([name, v, kind]) =>
      h('tr', {}, h('td', {}, name), h('td', {}, bar(v, max, kind)), h('td', {class: 'num'}, (v >= 0 ? '+' : '') + fmt(v))))));
}

function friends(j) {
  const parts = r => [r.intercept, r.pairs, r.kernel_term || 0, ...r.contributions.map(c => c.term)];
  const max = Math.max(0, ...j.items.flatMap(r => parts(r).map(Math.abs)));
  document.getElementById('friends-meta').textContent = j.reason ||
    `Ranked by ${j.learner}'s model ${j.model_version}. Strength: the probability of friendship; the bars add up to its log-odds on the balanced training sample.`;
  document.getElementById('friends').replaceChildren(...j.items.map(r => h('tr', {},
    h('td', {}, h('a', {href: userURL(r.user)}, r.user),
      h('div', {class: 'tags'}, `${r.common_friend_count} common friend${r.common_friend_count === 1 ? '' : 's'}`)),
    h('td', {class: 'num'}, (100 * r.strength).toFixed(1) + '%'),
    h('td', {}, chart(r, max)))));
}

function groups(j) {
  const rows = j.items.map(g => h('tr', {}, h('td', {}, g.group), h('td', {class: 'num'}, fmt(g.score, 2)),
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

function recommend() {
  const q = new URLSearchParams({k: opts.elements.k.value, learner: opts.elements.learner.value});
  history.replaceState(null, '', '?' + q);
  return Promise.all([
    show(`${api}/friends?${q}`, friends, 'friends-error', 'friends'),
    show(`${api}/groups?${new URLSearchParams({learner: q.get('learner')})}`, groups, 'groups-error', 'groups')]);
}

opts.addEventListener('submit', e => { e.preventDefault(); recommend(); });

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
