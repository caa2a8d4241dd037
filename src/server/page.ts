/**
 * The daemon's live status page (`GET /`): one self-contained HTML document with its style and
 * script inline and nothing from elsewhere. The script reads `/api/v1/targets` and
 * `/api/v1/targets/:name`, follows `/api/v1/events` with an EventSource (each event re-reads its
 * target, throttled), and draws per target what `modelwatch status` shows plus a timeline of the
 * current attempt's phases. Every text from the daemon (log lines above all) is set as text,
 * never parsed as HTML; the Content-Security-Policy admits only this style and script, by hash.
 */
import { createHash } from 'node:crypto';

const css = String.raw`
:root { color-scheme: dark; --bg: #0d1117; --panel: #161b22; --panel2: #1c2230; --border: #30363d; --text: #e6edf3; --dim: #8b949e;
  --starting: #8b949e; --loading_weights: #388bfd; --compiling: #a371f7; --warming_up: #d29922; --ready: #3fb950; --crashed: #f85149; --down: #484f58;
  --warn: #d29922; --bad: #f85149; --good: #3fb950; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: #58a6ff; text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 12px; }
.top { display: flex; align-items: center; gap: 14px; padding: 10px 20px; border-bottom: 1px solid var(--border); background: var(--panel); }
.top h1 { font-size: 16px; margin: 0; letter-spacing: .02em; }
.top .links { margin-left: auto; display: flex; gap: 14px; color: var(--dim); }
.conn { font-size: 12px; color: var(--dim); display: inline-flex; align-items: center; gap: 6px; }
.conn::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: var(--down); }
.conn.live::before { background: var(--good); }
.conn.lost::before { background: var(--bad); }
main { padding: 16px 20px; display: grid; gap: 16px; }
.card { background: var(--panel); border: 1px solid var(--border); border-radius: 8px; padding: 14px 16px; display: grid; gap: 12px; }
.card.crashed { border-color: #6e2b2b; }
.card.stalled { border-color: #6b5215; }
.head { display: flex; align-items: baseline; flex-wrap: wrap; gap: 8px 12px; }
.head h2 { margin: 0; font-size: 18px; }
.meta { color: var(--dim); font-size: 12px; }
.clock { margin-left: auto; color: var(--dim); font-size: 12px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #0d1117; background: var(--down); }
.flag { display: inline-block; padding: 1px 7px; border-radius: 4px; font-size: 11px; font-weight: 700; border: 1px solid currentColor; }
.flag.warn { color: var(--warn); } .flag.bad { color: var(--bad); } .flag.good { color: var(--good); } .flag.muted { color: var(--dim); }
.ph-starting { background: var(--starting); } .ph-loading_weights { background: var(--loading_weights); } .ph-compiling { background: var(--compiling); }
.ph-warming_up { background: var(--warming_up); } .ph-ready { background: var(--ready); } .ph-crashed { background: var(--crashed); } .ph-down { background: var(--down); }
.timeline { display: flex; height: 22px; border-radius: 4px; overflow: hidden; background: var(--panel2); border: 1px solid var(--border); }
.seg { flex: 0 1 auto; min-width: 3px; height: 100%; border-right: 1px solid rgba(13, 17, 23, .6); }
.seg.current { background-image: repeating-linear-gradient(135deg, rgba(255, 255, 255, .16) 0 6px, transparent 6px 12px); }
.seg.end { flex: 0 0 8px; }
.timeline .empty { color: var(--dim); font-size: 12px; padding: 2px 8px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: var(--dim); margin-top: 6px; }
.legend .dot { display: inline-block; width: 9px; height: 9px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
.legend b { color: var(--text); font-weight: 600; }
.stack { display: grid; gap: 12px; align-content: start; min-width: 0; }
.cols { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 12px; }
@media (max-width: 900px) { .cols { grid-template-columns: minmax(0, 1fr); } }
.panel { background: var(--panel2); border: 1px solid var(--border); border-radius: 6px; padding: 10px 12px; min-width: 0; }
.panel h3 { margin: 0 0 8px; font-size: 12px; text-transform: uppercase; letter-spacing: .06em; color: var(--dim); }
.row { display: grid; grid-template-columns: 70px minmax(60px, 1fr) auto; align-items: center; gap: 10px; font-size: 12px; margin: 4px 0; }
.row .label { color: var(--dim); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.row .val { white-space: nowrap; font-variant-numeric: tabular-nums; }
.bar { height: 10px; background: #0d1117; border: 1px solid var(--border); border-radius: 3px; overflow: hidden; }
.bar > div { height: 100%; background: var(--loading_weights); }
.bar.big { height: 16px; }
.bar.gpu > div { background: #2ea043; } .bar.gpu.high > div { background: var(--warn); }
.bar.none > div { background: transparent; }
.big-line { display: flex; gap: 14px; align-items: baseline; margin-top: 6px; font-size: 13px; font-variant-numeric: tabular-nums; }
.big-line .pct { font-size: 20px; font-weight: 600; }
.dim { color: var(--dim); }
.alert { border-radius: 6px; padding: 8px 12px; border: 1px solid; font-size: 13px; }
.alert.warn { border-color: #6b5215; background: rgba(210, 153, 34, .08); }
.alert.bad { border-color: #6e2b2b; background: rgba(248, 81, 73, .08); }
.alert h4 { margin: 0 0 4px; font-size: 13px; }
.alert.warn h4 { color: var(--warn); } .alert.bad h4 { color: var(--bad); }
.line { margin: 4px 0; padding: 6px 8px; background: #0d1117; border-radius: 4px; white-space: pre-wrap; word-break: break-all; }
details summary { cursor: pointer; color: var(--dim); font-size: 12px; }
table { border-collapse: collapse; width: 100%; font-size: 12px; font-variant-numeric: tabular-nums; }
th { text-align: left; color: var(--dim); font-weight: 500; padding: 2px 8px 4px 0; }
td { padding: 2px 8px 2px 0; }
.pass { color: var(--good); font-weight: 700; } .fail { color: var(--bad); font-weight: 700; }
.gate { font-size: 13px; }
.gate.open b { color: var(--good); } .gate.closed b { color: var(--dim); }
.events { max-height: 220px; overflow: auto; margin: 0; padding: 0; list-style: none; font-size: 12px; }
.events li { padding: 2px 0; border-bottom: 1px solid #21262d; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.events .t { color: var(--dim); margin-right: 8px; }
.nothing { color: var(--dim); }
`;

// Plain ES2020 for the browser. It builds every element with createElement and sets text with
// textContent, so nothing the daemon sends (log lines above all) is ever read as HTML.
const script = String.raw`
'use strict';
(function () {
  var phases = ['down', 'starting', 'loading_weights', 'compiling', 'warming_up', 'ready', 'crashed'];
  var eventTypes = ['attempt', 'transition', 'crash', 'foretell', 'stall', 'stall_cleared', 'canary', 'progress'];
  var counterLabels = { weight_shards: 'weights', cuda_graphs: 'CUDA graphs', prefetch: 'prefetch' };
  var throttleMs = 250;
  var state = { names: [], views: new Map(), skew: new Map(), pacing: new Map(), cards: new Map(), events: [] };
  var targetsEl = document.getElementById('targets');
  var eventsEl = document.getElementById('events');
  var connEl = document.getElementById('conn');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
  function str(v) { return typeof v === 'string' ? v : null; }
  function phaseClass(p) { return 'ph-' + (phases.indexOf(p) >= 0 ? p : 'down'); }
  function dur(s) {
    if (s === null || !isFinite(s)) return '—';
    s = Math.max(0, Math.round(s));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's';
    return Math.floor(s / 3600) + 'h' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + 'm';
  }
  function pct(r) { return r === null ? '—' : Math.round(r * 100) + '%'; }
  function gib(b) { return (b / 1073741824).toFixed(1); }
  function clock(ms) { var d = new Date(ms); return [d.getHours(), d.getMinutes(), d.getSeconds()].map(function (n) { return String(n).padStart(2, '0'); }).join(':'); }
  function ms(v) { return v === null ? '—' : Math.round(v) + ' ms'; }
  function at(iso) { var t = typeof iso === 'string' ? Date.parse(iso) : NaN; return isNaN(t) ? null : t; }

  function serverNow(name) { return Date.now() + (state.skew.get(name) || 0); }

  function bar(ratio, cls) {
    var b = el('div', 'bar' + (cls ? ' ' + cls : '') + (ratio === null ? ' none' : ''));
    var f = el('div');
    f.style.width = (ratio === null ? 0 : Math.min(1, Math.max(0, ratio)) * 100).toFixed(2) + '%';
    b.append(f);
    return b;
  }
  function row(label, ratio, value, cls) {
    var r = el('div', 'row');
    r.append(el('span', 'label', label), bar(ratio, cls), el('span', 'val', value));
    return r;
  }
  function flag(text, cls) { return el('span', 'flag ' + cls, text); }

  function timeline(t, now) {
    var box = el('div');
    var line = el('div', 'timeline');
    line.dataset.field = 'timeline';
    var legend = el('div', 'legend');
    var list = (Array.isArray(t.phases) ? t.phases : []).filter(function (p) { return p && str(p.phase) && at(p.at) !== null; });
    box.append(line, legend);
    if (list.length === 0) {
      line.append(el('div', 'empty', 'no load attempt yet'));
      return box;
    }
    var start = at(list[0].at);
    var last = list[list.length - 1];
    var over = last.phase === 'ready' || last.phase === 'crashed';
    var end = over ? at(last.at) : Math.max(now, at(last.at));
    var total = Math.max(1, end - start);
    list.forEach(function (p, i) {
      var from = at(p.at);
      var isLast = i === list.length - 1;
      var to = isLast ? end : at(list[i + 1].at);
      var seg = el('div', 'seg ' + phaseClass(p.phase) + (isLast ? (over ? ' end' : ' current') : ''));
      seg.dataset.phase = p.phase;
      if (!(isLast && over)) seg.style.width = (((to - from) / total) * 100).toFixed(3) + '%';
      seg.title = p.phase + ' at ' + clock(from) + (str(p.line) ? ': ' + p.line : '');
      line.append(seg);
      var item = el('span');
      var dot = el('span', 'dot ' + phaseClass(p.phase));
      item.append(dot, el('b', null, p.phase), document.createTextNode(' ' + (isLast && over ? 'at ' + clock(from) : dur((to - from) / 1000) + (isLast ? '…' : ''))));
      legend.append(item);
    });
    return box;
  }

  function progressPanel(t) {
    var p = el('div', 'panel');
    p.append(el('h3', null, 'Progress'));
    var e = t.estimate && typeof t.estimate === 'object' ? t.estimate : null;
    var ratio = e ? num(e.progressRatio) : null;
    var overall = bar(ratio, 'big');
    overall.dataset.field = 'progress';
    p.append(overall);
    var line = el('div', 'big-line');
    line.append(el('span', 'pct', pct(ratio)), el('span', null, 'ETA ' + dur(e ? num(e.etaSeconds) : null)));
    if (e && num(e.expectedTotalSeconds) !== null) {
      var past = num(e.pastLoads);
      line.append(el('span', 'dim', 'expected ' + dur(e.expectedTotalSeconds) + (past === null ? '' : ' from ' + past + ' past load' + (past === 1 ? '' : 's'))));
    }
    p.append(line);
    var counters = t.progress && typeof t.progress === 'object' ? Object.entries(t.progress) : [];
    counters.forEach(function (kv) {
      var c = kv[1] || {};
      var done = num(c.done), tot = num(c.total), r = num(c.ratio);
      p.append(row(counterLabels[kv[0]] || kv[0], r, done !== null && tot !== null ? done + '/' + tot : pct(r)));
    });
    return p;
  }

  function gpuPanel(t) {
    var p = el('div', 'panel');
    p.append(el('h3', null, 'GPU memory'));
    var gpus = Array.isArray(t.gpus) ? t.gpus : [];
    if (gpus.length === 0) p.append(el('div', 'nothing', 'no samples'));
    gpus.forEach(function (g) {
      var used = num(g.memoryUsedBytes), total = num(g.memoryTotalBytes), util = num(g.utilization);
      var r = used !== null && total ? used / total : null;
      var text = (r === null ? '—' : gib(used) + ' / ' + gib(total) + ' GiB · ' + pct(r)) + ' · util ' + pct(util);
      var rw = row('GPU ' + g.index, r, text, 'gpu' + (r !== null && r >= 0.97 ? ' high' : ''));
      if (str(g.name)) rw.title = g.name + (str(g.uuid) ? ' ' + g.uuid : '');
      p.append(rw);
      if (str(g.fault)) p.append(el('div', 'fail', 'GPU ' + g.index + ' fault: ' + g.fault));
    });
    return p;
  }

  function canaryPanel(t) {
    var p = el('div', 'panel');
    p.dataset.field = 'canary';
    p.append(el('h3', null, 'Smoke canary'));
    var c = t.canary && typeof t.canary === 'object' ? t.canary : {};
    var run = c.last && typeof c.last === 'object' ? c.last : null;
    if (!run) {
      var loading = ['starting', 'loading_weights', 'compiling', 'warming_up'].indexOf(t.phase) >= 0;
      p.append(el('div', 'nothing', c.running ? 'running…' : t.phase === 'ready' ? 'not run yet' : loading ? 'runs once the target is ready' : '—'));
      return p;
    }
    var when = at(run.at);
    var head = el('div');
    head.append(el('span', run.ok ? 'pass' : 'fail', run.ok ? 'passed' : 'failed'), document.createTextNode(
      (when === null ? '' : ' ' + dur((serverNow(t.name) - when) / 1000) + ' ago') + (str(run.trigger) ? ' (' + run.trigger + ')' : '') + (str(run.model) ? ' · ' + run.model : '') + (c.running ? ' · running again…' : '')));
    p.append(head);
    if (str(run.error)) p.append(el('div', 'fail', run.error));
    var results = Array.isArray(run.results) ? run.results : [];
    if (results.length > 0) {
      var table = el('table');
      var hr = el('tr');
      ['probe', '', 'latency', 'TTFT', 'tok/s', ''].forEach(function (h) { hr.append(el('th', null, h)); });
      table.append(hr);
      results.forEach(function (r) {
        var tr = el('tr');
        var tps = num(r.tokensPerSecond);
        tr.append(el('td', null, r.probe), el('td', r.ok ? 'pass' : 'fail', r.ok ? 'PASS' : 'FAIL'), el('td', null, ms(num(r.latencyMs))), el('td', null, ms(num(r.ttftMs))), el('td', null, tps === null ? '—' : tps.toFixed(1)), el('td', 'dim', r.ok ? '' : r.reason));
        table.append(tr);
      });
      p.append(table);
    }
    return p;
  }

  function alerts(t, card) {
    if (t.stalled) {
      var s = t.stall || {};
      var a = el('div', 'alert warn');
      a.dataset.field = 'stall';
      a.append(el('h4', null, 'Stalled in ' + (s.phase || t.phase) + ': no progress for ' + dur(num(s.silentMs) === null ? null : s.silentMs / 1000) + ' (budget ' + dur(num(s.budgetMs) === null ? null : s.budgetMs / 1000) + ')'));
      if (str(s.hint)) a.append(el('div', null, s.hint));
      card.append(a);
    }
    // Every deadline is listed; only those at risk are warnings.
    (Array.isArray(t.risks) ? t.risks : []).filter(function (r) { return r && (r.atRisk === true || (r.atRisk === undefined && str(r.message))); }).forEach(function (r) {
      var a = el('div', 'alert warn');
      a.dataset.field = 'risk';
      a.append(el('h4', null, 'Timeout risk: ' + (r.kind || '?')), el('div', null, r.message || ''));
      card.append(a);
    });
    if (!t.crash) {
      (Array.isArray(t.foretold) ? t.foretold : []).forEach(function (f) {
        var a = el('div', 'alert warn');
        a.append(el('h4', null, 'Heading for ' + f.reason), el('pre', 'line', f.line));
        if (str(f.hint)) a.append(el('div', null, f.hint));
        card.append(a);
      });
    }
    if (t.crash && typeof t.crash === 'object') {
      var c = t.crash;
      var b = el('div', 'alert bad');
      b.dataset.field = 'crash';
      b.append(el('h4', null, 'Crashed: ' + c.reason), el('div', 'dim', 'root cause'), el('pre', 'line', c.line));
      if (str(c.hint)) b.append(el('div', null, 'Hint: ' + c.hint));
      var ctx = Array.isArray(c.context) ? c.context.filter(function (l) { return typeof l === 'string'; }) : [];
      if (ctx.length > 0) {
        var d = el('details');
        d.append(el('summary', null, 'the lines around it (' + ctx.length + ')'), el('pre', 'line', ctx.join(String.fromCharCode(10))));
        b.append(d);
      }
      card.append(b);
    }
  }

  function card(t) {
    var now = serverNow(t.name);
    var c = el('section', 'card' + (t.phase === 'crashed' ? ' crashed' : t.stalled ? ' stalled' : ''));
    c.dataset.target = t.name;
    var head = el('div', 'head');
    var badge = el('span', 'badge ' + phaseClass(t.phase), t.phase);
    badge.dataset.field = 'phase';
    head.append(el('h2', null, t.name), badge);
    if (t.stalled) head.append(flag('STALLED', 'warn'));
    if (t.estimate && t.estimate.slow === true) head.append(flag('SLOW', 'warn'));
    if (t.health && t.health.up === false && t.phase === 'ready') head.append(flag('HEALTH DOWN', 'bad'));
    if (t.ready && typeof t.ready === 'object') head.append(flag(t.ready.ready ? 'READY TO SERVE' : 'NOT READY', t.ready.ready ? 'good' : 'muted'));
    var meta = [str(t.engine), str(t.version), num(t.attempt) === null ? null : 'attempt ' + t.attempt, str(t.url)].filter(Boolean).join(' · ');
    head.append(el('span', 'meta', meta));
    var since = at(t.since), started = at(t.startedAt), lastAt = Array.isArray(t.phases) && t.phases.length ? at(t.phases[t.phases.length - 1].at) : null;
    var clockText = since === null ? '' : t.phase === 'crashed' ? 'crashed ' + dur((now - since) / 1000) + ' ago' : t.phase + ' for ' + dur((now - since) / 1000);
    var sb = t.stallBudgets && typeof t.stallBudgets === 'object' ? t.stallBudgets[t.phase] : null;
    if (sb && num(sb.seconds) !== null && ['starting', 'loading_weights', 'compiling', 'warming_up'].indexOf(t.phase) >= 0) {
      clockText += ' (stall budget ' + dur(sb.seconds) + (sb.learned === true || sb.source === 'learned' ? ', learned' : '') + ')';
    }
    if (started !== null) {
      if ((t.phase === 'ready' || t.phase === 'crashed') && lastAt !== null) clockText += ' · ' + (t.phase === 'ready' ? 'loaded in ' : 'crashed after ') + dur((lastAt - started) / 1000);
      else clockText += ' · load running ' + dur((now - started) / 1000);
    }
    head.append(el('span', 'clock', clockText));
    c.append(head, timeline(t, now));
    alerts(t, c);
    var cols = el('div', 'cols');
    var left = el('div', 'stack');
    left.append(progressPanel(t), canaryPanel(t));
    cols.append(left, gpuPanel(t));
    c.append(cols);
    if (t.ready && typeof t.ready === 'object') {
      var g = el('div', 'gate ' + (t.ready.ready ? 'open' : 'closed'));
      g.dataset.field = 'gate';
      g.append(document.createTextNode('Readiness gate: '), el('b', null, t.ready.ready ? 'open' : 'closed'), document.createTextNode(' — ' + (t.ready.reason || '')));
      c.append(g);
    }
    return c;
  }

  function draw(name) {
    var t = state.views.get(name);
    if (!t) return;
    var fresh = card(t);
    var old = state.cards.get(name);
    // Keep an opened crash context open across redraws.
    var wasOpen = old ? old.querySelector('details[open]') !== null : false;
    if (wasOpen) { var d = fresh.querySelector('details'); if (d) d.open = true; }
    if (old && old.parentNode) old.replaceWith(fresh);
    else targetsEl.append(fresh);
    state.cards.set(name, fresh);
  }
  function drawAll() {
    if (state.names.length === 0) {
      targetsEl.replaceChildren(el('div', 'panel nothing', 'no targets configured'));
      state.cards.clear();
      return;
    }
    var wanted = new Set(state.names);
    state.cards.forEach(function (c, n) { if (!wanted.has(n)) { c.remove(); state.cards.delete(n); } });
    Array.from(targetsEl.children).forEach(function (c) { if (!(c instanceof HTMLElement) || !c.dataset.target) c.remove(); });
    state.names.forEach(function (n) { draw(n); var c = state.cards.get(n); if (c) targetsEl.append(c); });
  }

  async function getJson(path) {
    var res = await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store' });
    if (!res.ok) throw new Error(path + ' answered ' + res.status);
    return res.json();
  }
  async function fetchTarget(name, p) {
    p.inFlight = true;
    p.last = Date.now();
    try {
      var t = await getJson('/api/v1/targets/' + encodeURIComponent(name));
      var started = at(t.startedAt), elapsed = num(t.elapsedSeconds);
      // The daemon's clock, seen through its elapsed time: whole seconds, so only a real offset counts.
      if (started !== null && elapsed !== null) {
        var skew = started + elapsed * 1000 - Date.now();
        state.skew.set(name, Math.abs(skew) > 2000 ? skew : 0);
      }
      state.views.set(name, t);
      draw(name);
    } catch (err) {
      // The last view stays; the event stream's state says whether the daemon is reachable.
    } finally {
      p.inFlight = false;
      if (p.again) { p.again = false; request(name); }
    }
  }
  function request(name) {
    var p = state.pacing.get(name);
    if (!p) { p = { inFlight: false, again: false, last: 0, timer: 0 }; state.pacing.set(name, p); }
    if (p.inFlight) { p.again = true; return; }
    if (p.timer) return;
    var wait = p.last + throttleMs - Date.now();
    var pacing = p;
    if (wait > 0) { p.timer = setTimeout(function () { pacing.timer = 0; fetchTarget(name, pacing); }, wait); return; }
    fetchTarget(name, p);
  }
  async function loadList() {
    try {
      var body = await getJson('/api/v1/targets');
      state.names = (Array.isArray(body.targets) ? body.targets : []).map(function (t) { return t && t.name; }).filter(function (n) { return typeof n === 'string'; });
      drawAll();
      state.names.forEach(request);
    } catch (err) {
      setConn('lost', 'cannot read /api/v1/targets');
    }
  }

  function describe(e) {
    switch (e.type) {
      case 'attempt': return 'load attempt ' + e.attempt + ' started';
      case 'transition': return e.from + ' → ' + e.to;
      case 'crash': return (e.revised ? 'crash cause revised: ' : 'crashed: ') + e.reason;
      case 'foretell': return 'heading for ' + e.reason;
      case 'stall': return 'stalled in ' + e.phase + ' (' + dur(num(e.silentSeconds)) + ' without progress)';
      case 'stall_cleared': return 'stall cleared';
      case 'canary': return 'smoke canary ' + (e.ok ? 'passed' : 'failed') + (e.trigger ? ' (' + e.trigger + ')' : '');
      case 'progress': return 'progress ' + pct(num(e.progressRatio)) + ', ETA ' + dur(num(e.etaSeconds)) + (e.slow ? ', slow' : '');
      default: return e.type;
    }
  }
  function onEvent(msg) {
    var e;
    try { e = JSON.parse(msg.data); } catch (err) { return; }
    if (!e || typeof e !== 'object') return;
    e.type = str(e.type) || msg.type;
    if (e.type !== 'progress') {
      state.events.unshift(e);
      if (state.events.length > 50) state.events.length = 50;
      var li = el('li');
      var when = at(e.at);
      li.append(el('span', 't', when === null ? '' : clock(when)), el('b', null, String(e.target)), document.createTextNode(' ' + describe(e)));
      if (str(e.line)) li.title = e.line;
      eventsEl.prepend(li);
      while (eventsEl.children.length > 50) eventsEl.lastElementChild.remove();
    }
    if (typeof e.target !== 'string') return;
    if (state.names.indexOf(e.target) >= 0) request(e.target);
    else loadList();
  }

  function setConn(cls, text) {
    connEl.className = 'conn ' + cls;
    connEl.textContent = text;
  }

  var lost = false;
  function connect() {
    var source = new EventSource('/api/v1/events');
    eventTypes.forEach(function (type) { source.addEventListener(type, onEvent); });
    source.onmessage = onEvent;
    source.onopen = function () {
      setConn('live', 'live');
      if (lost) { eventsEl.replaceChildren(); loadList(); }
      lost = false;
    };
    source.onerror = function () {
      lost = true;
      setConn('lost', source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…');
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
    };
  }

  loadList();
  connect();
  // What sends no events (GPU memory, elapsed time) is re-read every 2 s; clocks move every second.
  setInterval(function () { state.names.forEach(request); }, 2000);
  setInterval(function () { state.names.forEach(draw); }, 1000);
})();
`;

const body = `<header class="top"><h1>modelwatch</h1><span id="conn" class="conn">connecting…</span><nav class="links"><a href="/api/v1/targets">API</a><a href="/metrics">metrics</a><a href="/healthz">healthz</a></nav></header>
<main><div id="targets"></div><section class="panel"><h3>Recent events</h3><ul id="events" class="events"></ul></section></main>`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The status page and the headers it must be served with. */
export interface StatusPage {
  readonly html: string;
  /** Admits this page's own inline style and script (by hash) and requests to its own origin only. */
  readonly contentSecurityPolicy: string;
}

let built: StatusPage | undefined;

/** The status page (built once: it is the same for every request; the data comes from the API). */
export function statusPage(): StatusPage {
  built ??= {
    html: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>modelwatch</title><link rel="icon" href="data:,">
<style>${css}</style></head>
<body>
${body}
<script>${script}</script>
</body></html>
`,
    contentSecurityPolicy: [
      "default-src 'none'",
      `script-src ${sha256(script)}`,
      `style-src ${sha256(css)}`,
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
  return built;
}
