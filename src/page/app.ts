/**
 * The status page's script (bundled by `npm run page` into `src/server/page-script.generated.ts`).
 * It reads `/api/v1/targets` and `/api/v1/targets/:name` into the typed state, follows
 * `/api/v1/events` with an EventSource (each event re-reads its target, throttled), and redraws
 * a target's card from its state; what sends no events (GPU memory, elapsed time) is re-read every
 * 2 s, and clocks move every second.
 */
import type { TargetEvent } from '../state/events.js';
import type { TargetStatus } from '../state/target-status.js';
import { eventText } from '../status/describe.js';
import { daemonSkewMs } from '../status/daemon-clock.js';
import { clock } from '../status/format.js';
import { eventTypes, parseStreamEvent } from '../status/parse-event.js';
import { parseTargetStatus } from '../status/parse-status.js';
import { list, obj, str } from '../status/read-json.js';
import { card } from './card.js';
import { el, text } from './dom.js';

const throttleMs = 250;
const keptEvents = 50;
/** A daemon clock this far from ours is an offset; closer, it is rounding (elapsed time is whole seconds). */
const skewSlackMs = 2000;

interface Pacing {
  inFlight: boolean;
  again: boolean;
  last: number;
  timer: number;
}

function byId(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`the page has no #${id}`);
  return e;
}

const targetsEl = byId('targets');
const eventsEl = byId('events');
const connEl = byId('conn');

let names: string[] = [];
const states = new Map<string, TargetStatus>();
const skews = new Map<string, number>();
const pacing = new Map<string, Pacing>();
const cards = new Map<string, HTMLElement>();

/** The daemon's time now, as far as its answers for this target tell. */
const daemonNow = (name: string): number => Date.now() + (skews.get(name) ?? 0);

function draw(name: string): void {
  const t = states.get(name);
  if (t === undefined) return;
  const fresh = card(t, daemonNow(name));
  const old = cards.get(name);
  // An opened crash context stays open across redraws.
  if (old?.querySelector('details[open]')) {
    const d = fresh.querySelector('details');
    if (d !== null) d.open = true;
  }
  if (old?.parentNode) old.replaceWith(fresh);
  else targetsEl.append(fresh);
  cards.set(name, fresh);
}

function drawAll(): void {
  if (names.length === 0) {
    targetsEl.replaceChildren(el('div', 'panel nothing', 'no targets configured'));
    cards.clear();
    return;
  }
  const wanted = new Set(names);
  for (const [n, c] of cards) {
    if (!wanted.has(n)) {
      c.remove();
      cards.delete(n);
    }
  }
  for (const c of Array.from(targetsEl.children)) if (!(c instanceof HTMLElement) || c.dataset['target'] === undefined) c.remove();
  for (const n of names) {
    draw(n);
    const c = cards.get(n);
    if (c !== undefined) targetsEl.append(c);
  }
}

async function getJson(path: string): Promise<unknown> {
  const res = await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store' });
  if (!res.ok) throw new Error(`${path} answered ${res.status}`);
  return res.json();
}

async function fetchTarget(name: string, p: Pacing): Promise<void> {
  p.inFlight = true;
  p.last = Date.now();
  try {
    const t = parseTargetStatus(await getJson(`/api/v1/targets/${encodeURIComponent(name)}`), name);
    const skew = daemonSkewMs(t, Date.now());
    if (skew !== null) skews.set(name, Math.abs(skew) > skewSlackMs ? skew : 0);
    states.set(name, t);
    draw(name);
  } catch {
    // The last state stays shown; the event stream's state says whether the daemon is reachable.
  } finally {
    p.inFlight = false;
    if (p.again) {
      p.again = false;
      request(name);
    }
  }
}

/** Re-reads a target now, or as soon as its throttle allows; requests meanwhile coalesce. */
function request(name: string): void {
  let p = pacing.get(name);
  if (p === undefined) {
    p = { inFlight: false, again: false, last: 0, timer: 0 };
    pacing.set(name, p);
  }
  if (p.inFlight) {
    p.again = true;
    return;
  }
  if (p.timer !== 0) return;
  const wait = p.last + throttleMs - Date.now();
  const paced = p;
  if (wait > 0) {
    p.timer = window.setTimeout(() => {
      paced.timer = 0;
      void fetchTarget(name, paced);
    }, wait);
    return;
  }
  void fetchTarget(name, p);
}

function setConn(cls: 'live' | 'lost', label: string): void {
  connEl.className = `conn ${cls}`;
  connEl.textContent = label;
}

async function loadList(): Promise<void> {
  try {
    names = list(obj(await getJson('/api/v1/targets'))?.['targets']).flatMap((t) => str(obj(t)?.['name']) ?? []);
    drawAll();
    for (const n of names) request(n);
  } catch {
    setConn('lost', 'cannot read /api/v1/targets');
  }
}

function listEvent(e: TargetEvent): void {
  const at = Date.parse(e.at);
  const li = el('li');
  li.append(el('span', 't', Number.isNaN(at) ? '' : clock(at)), el('b', null, e.target), text(` ${eventText(e)}`));
  if ('line' in e && e.line !== null && e.line !== '') li.title = e.line;
  eventsEl.prepend(li);
  while (eventsEl.children.length > keptEvents) eventsEl.lastElementChild?.remove();
}

function onEvent(msg: MessageEvent<unknown>): void {
  const streamed = parseStreamEvent(msg.type, typeof msg.data === 'string' ? msg.data : '');
  if (streamed === null) return;
  // Progress moves every few seconds: the card shows it, the list would drown in it.
  if (streamed.event !== null && streamed.event.type !== 'progress') listEvent(streamed.event);
  if (names.includes(streamed.target)) request(streamed.target);
  else void loadList();
}

let lost = false;
function connect(): void {
  const source = new EventSource('/api/v1/events');
  for (const type of eventTypes) source.addEventListener(type, onEvent);
  source.onmessage = onEvent;
  source.onopen = () => {
    setConn('live', 'live');
    if (lost) {
      eventsEl.replaceChildren();
      void loadList();
    }
    lost = false;
  };
  source.onerror = () => {
    lost = true;
    const closed = source.readyState === EventSource.CLOSED;
    setConn('lost', closed ? 'disconnected' : 'reconnecting…');
    if (closed) window.setTimeout(connect, 3000);
  };
}

void loadList();
connect();
window.setInterval(() => {
  for (const n of names) request(n);
}, 2000);
window.setInterval(() => {
  for (const n of names) draw(n);
}, 1000);
