'use strict';
// strategy names a re-rank strategy, with why it cannot re-rank here
// when /v1/learners says so.
const strategy = s => s.rerank === false ? `${s.name} (not here: ${s.rerank_reason || 'no reason given'})` : s.name;

// range says which values a parameter takes.
function range(p) {
  if (p.enum) return p.enum.join(' | ');
  if (p.min === undefined && p.max === undefined) return '';
  return (p.min === undefined ? '(-∞' : (p.min_exclusive ? '(' : '[') + p.min) + ', ' + (p.max === undefined ? '∞)' : p.max + ']');
}

function learner(s, recommenders) {
  const badges = [h('span', {class: 'badge'}, s.kind)];
  if (s.fixed) badges.push(h('span', {class: 'badge'}, 'fixed strategy'));
  for (const a of s.aliases || []) badges.push(h('span', {class: 'badge'}, 'alias ' + a));
  if (recommenders.includes(s.name)) badges.push(h('span', {class: 'badge'}, 'recommendations'));
  if (s.rerank === true) badges.push(h('span', {class: 'badge'}, 're-ranks search'));
  const params = (s.params || []).length ? h('table', {},
    h('thead', {}, h('tr', {}, ['parameter', 'type', 'default', 'range', 'meaning'].map(c => h('th', {scope: 'col'}, c)))),
    h('tbody', {}, s.params.map(p => h('tr', {}, h('td', {}, h('code', {}, p.name)), h('td', {}, p.type),
      h('td', {class: 'num'}, JSON.stringify(p.default)), h('td', {class: 'num'}, range(p)), h('td', {}, p.doc)))))
    : h('p', {class: 'muted'}, 'No parameters.');
  // Collapsed to a line each (the one named by the URL's #fragment open),
  // the parameter tables being long.
  const id = 'learner-' + s.name;
  return h('details', {class: 'learner', id, open: location.hash === '#' + id},
    h('summary', {}, h('h3', {}, s.name, badges)), h('p', {}, s.doc),
    h('p', {class: 'muted'}, 'needs: ' + (s.needs && s.needs.length ? s.needs.join(', ') : 'nothing beyond its input')),
    s.rerank === false ? h('p', {class: 'muted'}, 'cannot re-rank a search here: ' + (s.rerank_reason || 'the server does not say why')) : null,
    params);
}

(async function start() {
  try {
    const j = await getJSON('/v1/learners');
    // Every name rerank= takes here, then the fixed strategies that cannot
    // re-rank this corpus, with why.
    const rerankers = [...(j.rerank || []), ...(j.strategies || []).filter(s => s.rerank === false).map(strategy)];
    const rows = [['re-rankers', rerankers.join(', ')], ['default re-ranker', j.default_rerank],
      ['priors', (j.priors || []).join(', ') + ` (default ${j.default_prior})`],
      ['affinities', (j.affinities || []).join(', ') + ` (default ${j.default_affinity})`],
      ['recommendation learners', (j.recommend || []).join(', ') + ` (default ${j.default_recommend})`]];
    document.getElementById('search').replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    document.getElementById('learners').replaceChildren(...j.learners.map(s => learner(s, j.recommend || [])));
  } catch (err) {
    showError(err);
  }
})();
