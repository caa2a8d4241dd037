/**
 * The daemon's live status page (`GET /`): one self-contained HTML document with its style and
 * script inline and nothing from elsewhere. The script is `src/page/app.ts`, a typed browser
 * module bundled ahead of time (`npm run page`) into `page-script.generated.ts`: it reads the
 * typed state from `/api/v1/targets/:name`, follows `/api/v1/events`, and draws per target what
 * `modelwatch status` shows, in the same words, plus a timeline of the current attempt's phases.
 * Every text from the daemon (log lines above all) is set as text, never parsed as HTML; the
 * Content-Security-Policy admits only this style and script, by hash.
 */
import { createHash } from 'node:crypto';
import { pageScript as script } from './page-script.generated.js';

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
.card.unhealthy { border-color: #6e2b2b; }
.head { display: flex; align-items: baseline; flex-wrap: wrap; gap: 8px 12px; }
.head h2 { margin: 0; font-size: 18px; }
.meta { color: var(--dim); font-size: 12px; }
.meta.unseen { font-style: italic; }
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
.small { font-size: 12px; margin-top: 6px; }
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
