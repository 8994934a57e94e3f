// The console page: a timeline of the log's events and translations, every object's status at the
// moment picked, one object's conditions over time with its explain trace and xDS, and the diff of two
// moments. Preact with htm templates (no build step beyond tsc, 5 kB of library): the page is a few
// views over the server's JSON API, and the server does the work.
import { h, render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import type {
  Density,
  EventSummary,
  History,
  LogSummary as Summary,
  MomentDiff as Diff,
  ObjectDetail,
  ObjectSummary,
  Page,
  SetChange,
} from '../src/console/console-api.js';

const html = htm.bind(h);

type Params = Record<string, string | number | boolean | undefined>;

async function get<T>(path: string, params: Params = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const res = await fetch(`${path}?${q}`);
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${path}: HTTP ${res.status}`);
  return body;
}

const eventText = (e: EventSummary) => `#${e.seq} ${e.at} ${e.type} ${e.kind}${e.object ? ` ${e.object}` : ''}`;

function Timeline(props: { summary: Summary; seq: number; onSeq: (seq: number) => void }) {
  const [density, setDensity] = useState<Density | undefined>();
  const [events, setEvents] = useState<EventSummary[]>([]);
  const [current, setCurrent] = useState<EventSummary | null>(null);
  useEffect(() => void get<Density>('/api/density', { buckets: 120 }).then(setDensity), [props.summary.events]);
  useEffect(() => {
    void get<EventSummary | null>('/api/event', { seq: props.seq }).then(async (e) => {
      setCurrent(e);
      const page = await get<Page<EventSummary>>('/api/events', {
        offset: Math.max(0, (e?.index ?? 0) - 5),
        limit: 11,
      });
      setEvents(page.items);
    });
  }, [props.seq]);
  const max = Math.max(...(density?.events ?? [1]), 1);
  const jump = (bucket: number) => {
    const index = density?.firstIndex[bucket] ?? -1;
    if (index >= 0)
      void get<Page<EventSummary>>('/api/events', { offset: index, limit: 1 }).then(
        (p) => p.items[0] && props.onSeq(p.items[0].seq),
      );
  };
  return html`<section>
    <div class="density" title="events over the log's clock; darker: a translation">
      ${(density?.events ?? []).map(
        (n, i) => html`<div class=${[
          density!.translations[i] ? 'translated' : '',
          density!.gaps[i] ? 'gap' : '',
          density!.boundaries[i] ? 'boundary' : '',
        ].join(' ')}
        style=${`height:${density!.gaps[i] ? 40 : Math.max(2, (40 * n) / max)}px`} onClick=${() => jump(i)}></div>`,
      )}
    </div>
    ${(props.summary.gaps ?? []).map(
      (g) => html`<div class="muted gap-note" data-testid="gap">
        not recorded (${g.reason}): ${g.from ?? 'before the log'} – ${g.to}; the log resumes from a checkpoint after event
        <a href="#" onClick=${(ev: Event) => (ev.preventDefault(), props.onSeq(g.seq))}>#${g.seq}</a>
      </div>`,
    )}
    <input type="range" data-testid="timeline" min=${props.summary.firstSeq ?? 0} max=${props.summary.lastSeq ?? 0} value=${props.seq}
      onInput=${(ev: Event) => props.onSeq(Number((ev.target as HTMLInputElement).value))} />
    <div class="controls">
      <strong data-testid="current-event">${current ? eventText(current) : 'before the first event'}</strong>
      <span class="muted">${density ? `${density.from} – ${density.to}` : ''}</span>
    </div>
    <ul class="events">
      ${events.map(
        (
          e,
        ) => html`<li class=${e.seq === current?.seq ? 'current' : ''} data-testid="event" onClick=${() => props.onSeq(e.seq)}>
        ${eventText(e)}${e.translated ? ' ⟳' : ''}</li>`,
      )}
    </ul>
  </section>`;
}

function ObjectTable(props: { seq: number; selected: string | null; onSelect: (key: string) => void }) {
  const [filter, setFilter] = useState('');
  const [trouble, setTrouble] = useState(false);
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<{ total: number; items: ObjectSummary[] }>({ total: 0, items: [] });
  useEffect(
    () => void get<typeof page>('/api/objects', { seq: props.seq, filter, trouble, offset, limit: 100 }).then(setPage),
    [props.seq, filter, trouble, offset],
  );
  return html`<div>
    <div class="controls">
      <input placeholder="filter objects" data-testid="filter" value=${filter} onInput=${(e: Event) => {
        setOffset(0);
        setFilter((e.target as HTMLInputElement).value);
      }} />
      <label><input type="checkbox" checked=${trouble} onChange=${(e: Event) => setTrouble((e.target as HTMLInputElement).checked)} /> only trouble</label>
      <span class="muted" data-testid="object-count">${page.total} object(s)</span>
      ${offset > 0 ? html`<button onClick=${() => setOffset(Math.max(0, offset - 100))}>previous</button>` : ''}
      ${offset + 100 < page.total ? html`<button onClick=${() => setOffset(offset + 100)}>next</button>` : ''}
    </div>
    <table>
      <tbody>
        ${page.items.map(
          (
            o,
          ) => html`<tr class=${`object-row${o.key === props.selected ? ' selected' : ''}`} data-testid="object-row" data-key=${o.key}
            onClick=${() => props.onSelect(o.key)}>
          <td>${o.key}</td>
          <td>${o.conditions
            .filter((c) => !c.where || c.trouble)
            .map(
              (c) =>
                html`<span class=${`badge${c.trouble ? ' trouble' : ''}`} title=${`${c.where} ${c.reason}`}>${c.type}=${c.status}</span>`,
            )}</td>
        </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function ObjectPanel(props: { objectKey: string; seq: number; onSeq: (seq: number) => void }) {
  const [detail, setDetail] = useState<ObjectDetail | undefined>();
  const [history, setHistory] = useState<History['changes'] | undefined>();
  useEffect(
    () => void get<ObjectDetail>('/api/object', { key: props.objectKey, seq: props.seq }).then(setDetail),
    [props.objectKey, props.seq],
  );
  useEffect(() => {
    setHistory(undefined);
    void get<History>('/api/history', { key: props.objectKey }).then((r) => setHistory(r.changes));
  }, [props.objectKey]);
  if (!detail) return html`<div>Loading ${props.objectKey}…</div>`;
  return html`<div data-testid="object-detail">
    <h2>${detail.key}</h2>
    ${detail.found ? '' : html`<p class="muted">not in the input at this moment</p>`}
    <table>
      <thead><tr><th>where</th><th>condition</th><th>status</th><th>reason</th><th>message</th></tr></thead>
      <tbody>${detail.conditions.map(
        (c) => html`<tr data-testid="condition-row">
        <td>${c.where}</td><td>${c.type}</td><td class=${c.trouble ? 'removed' : 'added'}>${c.status}</td><td>${c.reason}</td><td>${c.message}</td></tr>`,
      )}</tbody>
    </table>
    <h3>Conditions over time</h3>
    ${
      history === undefined
        ? html`<p class="muted">computing…</p>`
        : html`<ol data-testid="history">
      ${history.map(
        (c) => html`<li data-testid="history-change"><a href="#" onClick=${(e: Event) => {
          e.preventDefault();
          props.onSeq(c.seq);
        }}>#${c.seq}</a>
        ${' '}${c.at} ${c.event}: ${c.before.join(', ') || '(none)'} → ${c.after.join(', ') || '(none)'}</li>`,
      )}</ol>`
    }
    <h3>Explain</h3>
    <pre data-testid="explain">${detail.explain.join('\n')}</pre>
    <h3>xDS</h3>
    <pre data-testid="xds">${JSON.stringify(detail.xds, null, 2)}</pre>
  </div>`;
}

function DiffPanel(props: { diff: Diff; a: number; b: number }) {
  const d = props.diff;
  const set = (label: string, s: SetChange) => [
    ...s.added.map((k) => html`<li class="added">+ ${label} ${k}</li>`),
    ...s.removed.map((k) => html`<li class="removed">- ${label} ${k}</li>`),
    ...s.changed.map((k) => html`<li class="changed">~ ${label} ${k}</li>`),
  ];
  return html`<section data-testid="diff">
    <h2>From event #${props.a} to event #${props.b}</h2>
    ${d.same ? html`<p>no differences</p>` : ''}
    <ul>${d.objects.map(
      (o) => html`<li><strong>${o.change} ${o.object}</strong><ul>
      ${o.conditions.map((c) => html`<li>${c.where} ${c.type}: ${c.old ?? '(none)'} → ${c.new ?? '(none)'}</li>`)}</ul></li>`,
    )}</ul>
    <ul>${d.xds.map(
      (g) => html`<li><strong>${g.change} gateway ${g.gateway}</strong><ul>
      ${set('listener', g.listeners)}${set('route', g.routes)}${set('cluster', g.clusters)}</ul></li>`,
    )}</ul>
  </section>`;
}

function App() {
  const [summary, setSummary] = useState<Summary | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [seq, setSeq] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const [marks, setMarks] = useState<{ a?: number; b?: number }>({});
  const [diff, setDiff] = useState<Diff | undefined>();
  useEffect(() => {
    get<Summary>('/api/summary').then(
      (s) => {
        setSummary(s);
        setSeq(s.lastSeq ?? 0);
      },
      (e: Error) => setError(e.message),
    );
  }, []);
  if (error) return html`<p class="removed">${error}</p>`;
  if (!summary) return html`<p>Loading…</p>`;
  const openDiff = () => {
    if (marks.a === undefined || marks.b === undefined) return;
    void get<Diff>('/api/diff', { a: marks.a, b: marks.b }).then(setDiff);
  };
  return html`<div>
    <header>
      <h1>Turnpike console</h1>
      <span class="muted" data-testid="summary">${summary.events} events, ${summary.translations} translations${summary.source ? ` from ${summary.source}` : ''}</span>
    </header>
    <${Timeline} summary=${summary} seq=${seq} onSeq=${setSeq} />
    <section class="controls">
      <button data-testid="mark-a" onClick=${() => setMarks({ ...marks, a: seq })}>mark A${marks.a !== undefined ? ` (#${marks.a})` : ''}</button>
      <button data-testid="mark-b" onClick=${() => setMarks({ ...marks, b: seq })}>mark B${marks.b !== undefined ? ` (#${marks.b})` : ''}</button>
      <button data-testid="diff-button" disabled=${marks.a === undefined || marks.b === undefined} onClick=${openDiff}>diff A → B</button>
    </section>
    ${diff && marks.a !== undefined && marks.b !== undefined ? html`<${DiffPanel} diff=${diff} a=${marks.a} b=${marks.b} />` : ''}
    <section class="layout">
      <${ObjectTable} seq=${seq} selected=${selected} onSelect=${setSelected} />
      ${selected ? html`<${ObjectPanel} objectKey=${selected} seq=${seq} onSeq=${setSeq} />` : html`<p class="muted">Pick an object.</p>`}
    </section>
  </div>`;
}

const root = document.getElementById('app')!;
root.textContent = '';
render(html`<${App} />`, root);
