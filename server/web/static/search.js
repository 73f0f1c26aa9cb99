'use strict';
const form = document.getElementById('search');
const F = form.elements;

// The re-rankers this page offers when /v1/learners does not say which
// can re-rank a search of this corpus.
const knownRerankers = ['raw', 'text', 'linear', 'poly', 'rbf', 'intersection', 'npk', 'npk-fused'];

// rerankers picks the choices from /v1/learners: the strategies and
// learners it marks as able to re-rank a search of this corpus
// (rerank: true), else the known list among its strategies.
function rerankers(j) {
  const marked = [...(j.strategies || []), ...(j.learners || [])].filter(s => typeof s.rerank === 'boolean');
  if (marked.length) return {names: [...new Set(marked.filter(s => s.rerank).map(s => s.name))], checked: true};
  return {names: knownRerankers.filter(s => (j.rerank || knownRerankers).includes(s)), checked: false};
}

const pct = x => (100 * x).toFixed(2) + '%';

// moved says in words what placed a re-ranked result: the tag match (its
// text rank, was; undefined when below the text order's top `shown`) or
// the visual votes, whose share it holds against an average image of the
// window's n (1/n of the rank mass).
function moved(hit, was, shown, n) {
  if (hit.no_features) return 'Its tag match alone placed it: it has no visual features and took no part in the votes.';
  const share = `${fmt(hit.visualrank * n, 1)}× an average image's share of the visual votes`;
  if (was === undefined) return `Visual votes moved it up from below text rank ${shown}: its tags match less well than those above, but it holds ${share}.`;
  const d = was - hit.rank;
  if (d > 0) return `Visual votes moved it up ${d} from text rank ${was}: it holds ${share}.`;
  if (d < 0) return `Visual votes moved it down ${-d} from text rank ${was}, where its tag match had it: it holds only ${share}.`;
  return `Tag match and visual votes agree: it keeps text rank ${was} and holds ${share}.`;
}

// scores explains one result: what moved it in words, its text score, its
// VisualRank score and the neighbours whose votes raised it most (textRank
// and n as for item).
function scores(hit, textRank, n) {
  const dl = h('dl', {class: 'scores'}, h('dt', {}, 'text score'), h('dd', {}, fmt(hit.text_score)));
  if (textRank === null) return [dl, h('p', {class: 'muted'}, 'Ranked by its text score (tag match) alone.')];
  const why = h('p', {class: 'why'}, moved(hit, textRank.get(hit.id), textRank.size, n));
  dl.append(h('dt', {}, 'VisualRank'), h('dd', {}, pct(hit.visualrank) + ' of the rank mass'));
  if (hit.no_features) return [why, dl];
  const voters = hit.voters || [];
  if (!voters.length) return [why, dl, h('p', {class: 'muted'}, 'No neighbour voted for it.')];
  return [why, dl, h('p', {class: 'muted'}, 'Neighbours whose votes raised it most:'),
    h('ul', {class: 'voters'}, voters.map(v => h('li', {title: `${v.id}: vote ${pct(v.weight)}`},
      h('img', {src: thumbURL(v.id), alt: v.id, loading: 'lazy', width: 48, height: 48}), '+' + pct(v.weight))))];
}

// item renders one result; textRank maps ids to their rank in the text
// order's top k (null for the text column itself), n is the re-ranked
// window's size.
function item(hit, textRank, n) {
  const reranked = textRank !== null;
  const body = [h('div', {class: 'title'}, hit.title || hit.id), h('div', {class: 'tags'}, hit.tags.slice(0, 8).join(', '))];
  if (reranked) {
    const was = textRank.get(hit.id);
    const d = was === undefined ? null : was - hit.rank;
    body.push(was === undefined ? h('div', {class: 'move up'}, `from below text rank ${textRank.size}`)
      : h('div', {class: 'move' + (d > 0 ? ' up' : d < 0 ? ' down' : '')},
        `text rank ${was}` + (d > 0 ? ` (up ${d})` : d < 0 ? ` (down ${-d})` : ' (same)')));
  }
  body.push(h('details', {}, h('summary', {}, 'Why this rank?', h('span', {class: 'visually-hidden'}, ` (${hit.title || hit.id})`)),
    scores(hit, textRank, n)));
  return h('li', {'data-id': hit.id},
    h('span', {class: 'rank'}, hit.rank + '.'),
    hit.thumbnail ? h('img', {class: 'thumb', src: hit.thumbnail, alt: hit.title || hit.id, width: 72, height: 72}) : h('span'),
    h('div', {}, body));
}

function describe(j) {
  const r = j.rerank;
  let s = `${j.total} matches; the top ${j.window} re-ranked by ${r.strategy} (prior ${r.prior}) in ${fmt(j.total_ms, 1)} ms, cache ${r.cache}`;
  if (r.learner && r.learner.iterations !== undefined) s += `; learner: ${r.learner.iterations} iterations`;
  if (r.decision) s += `; chosen for this query: ${r.decision.reason}`;
  return s + (r.warning ? `. Warning: ${r.warning}` : '');
}

let latest = 0; // only the latest search draws its answer
async function search() {
  const seq = ++latest;
  const p = {q: F.q.value.trim(), k: F.k.value, rerank: F.rerank.value, prior: F.prior.value};
  if (F.window.value) p.window = F.window.value;
  history.replaceState(null, '', '?' + new URLSearchParams(p));
  const raw = document.getElementById('raw'), ranked = document.getElementById('ranked'), meta = document.getElementById('meta');
  showError(null);
  meta.textContent = 'Searching…';
  document.getElementById('ranked-title').textContent = `Re-ranked by ${p.rerank}`;
  try {
    const [t, r] = await Promise.all([
      getJSON('/v1/search?' + new URLSearchParams({...p, rerank: 'raw'})),
      getJSON('/v1/search?' + new URLSearchParams({...p, voters: 5}))]);
    if (seq !== latest) return;
    const textRank = new Map(t.results.map(x => [x.id, x.rank]));
    raw.replaceChildren(...t.results.map(x => item(x, null)));
    ranked.replaceChildren(...r.results.map(x => item(x, textRank, r.window)));
    meta.textContent = r.results.length ? describe(r) : `No image is tagged with any of "${p.q}".`;
    recordSearch(raw, t);
    recordSearch(ranked, r);
  } catch (err) {
    if (seq !== latest) return;
    raw.replaceChildren();
    ranked.replaceChildren();
    meta.textContent = '';
    showError(err);
  }
}

// recordSearch reports the results of answer j drawn in list; a click on a
// result's picture or title is a click on it.
function recordSearch(list, j) {
  return recordList(list, '.thumb, .title', 'search', {query: j.query, rerank: j.rerank.strategy},
    j.results.map(x => ({item: x.id, rank: x.rank})));
}

form.addEventListener('submit', e => { e.preventDefault(); search(); });

// compared names the re-ranker the right-hand column starts with: the
// server's default, unless that is the text order itself (its validation
// found no re-ranker better beyond noise), when the two columns would be
// the same: then the re-ranker best on its validation queries, and a note
// saying so.
function compared(j) {
  const sel = j.default_rerank_selection, dec = j.default_rerank_decision;
  const decided = dec && dec.adopted ? ` A search that names no re-ranker is decided per query: ${dec.rule}.` : '';
  if (j.default_rerank !== 'raw') return {name: j.default_rerank, note: decided};
  const best = ((sel && sel.precision) || []).filter(p => p.strategy !== 'raw')
    .reduce((a, p) => (!a || p.precision > a.precision ? p : a), null);
  const name = best ? best.strategy : 'npk-fused';
  const why = sel && sel.reason ? sel.reason : 'the text order (raw)';
  return {name, note: ` Served by default: ${why}. The right-hand column starts with ${name}, the best re-ranker on the server's validation queries.` + decided};
}

(async function start() {
  const q = new URLSearchParams(location.search);
  try {
    const j = await getJSON('/v1/learners');
    const {names, checked} = rerankers(j);
    const start = compared(j);
    const want = q.get('rerank') || start.name;
    for (const s of names) F.rerank.add(new Option(s, s, false, s === want));
    document.getElementById('rerank-note').textContent = (checked
      ? 'The re-rankers listed are those the server says can re-rank this corpus.'
      : 'The server does not say which re-rankers suit this corpus: all the built-in ones are listed.') + start.note;
  } catch (err) {
    showError(err);
    return;
  }
  for (const name of ['q', 'k', 'window', 'prior']) if (q.get(name)) F[name].value = q.get(name);
  if (F.q.value) search();
})();
