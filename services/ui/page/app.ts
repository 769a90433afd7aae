// The dashboard's page: reads the dashboard's JSON API, follows /api/events (server-sent events)
// and renders the cluster, the queue, replicas, queues (quotas, borrowing) and reservations, the live decisions, and a
// job's story. It refreshes its views when the log moves, never on a timer of its own.
import { describe } from './describe.ts';
import { clock, fill, h } from './h.ts';
import type { FeedItem, JobPage, JobRow, NodeRow, QueueRow, ReplicaRow } from './types.ts';

const FEED_MAX = 200;
/** Rows a table shows at most (a long queue is summed up below it). */
const ROWS_MAX = 200;
const palette = ['#3182ce', '#38a169', '#d69e2e', '#805ad5', '#dd6b20', '#319795', '#d53f8c', '#718096'];
let jobs: JobRow[] = [];
// jobs the last list left out (more than one reply carries: muster.api.jobs.list says how many)
let jobsLeftOut = 0;
let queues: QueueRow[] = [];
let refreshing = false;
let again = false;
let openJob: string | null = null;

async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await res.json()) as T & { error?: { message: string } };
  if (!res.ok) throw new Error(body.error?.message ?? `${path}: ${res.status}`);
  return body;
}

function colourOf(jobId: string): string {
  let hash = 0;
  for (const c of jobId) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return palette[hash % palette.length] ?? '#3182ce';
}

function jobLink(jobId: string): HTMLElement {
  return h('a', { href: `#job=${encodeURIComponent(jobId)}`, 'data-job-link': jobId }, jobId);
}

function tag(text: string, cls = text): HTMLElement {
  return h('span', { class: `tag ${cls}` }, text);
}

function bar(label: string, used: number, total: number | null, unit: (n: number) => string): HTMLElement {
  const pct = total === null || total === 0 ? 0 : Math.min(100, (100 * used) / total);
  return h('div', { class: 'bar' }, label, h('div', { class: 'track' }, h('div', { class: 'fill', style: `width:${pct.toFixed(1)}%` })), `${unit(used)}/${total === null ? '∞' : unit(total)}`);
}

const cores = (m: number): string => (m / 1000).toFixed(m % 1000 === 0 ? 0 : 1);
const gib = (mb: number): string => (mb / 1024).toFixed(mb % 1024 === 0 ? 0 : 1);
const count = (n: number): string => String(n);

function renderNodes(nodes: NodeRow[]): void {
  const up = nodes.filter((n) => n.status === 'up').length;
  const gpus = nodes.reduce((s, n) => s + (n.gpus.total ?? 0), 0);
  const gpusUsed = nodes.reduce((s, n) => s + n.gpus.used, 0);
  fill('cluster-sum', `${up}/${nodes.length} nodes up · GPUs ${gpusUsed}/${gpus} in use`);
  fill(
    'nodes',
    ...nodes.map((n) =>
      h(
        'div',
        { class: `card ${n.status}`, 'data-node': n.id, 'data-status': n.status },
        h('h4', {}, n.id, tag(n.status, n.status === 'up' ? 'running' : 'failed')),
        bar('cores', n.cpu.used, n.cpu.total, cores),
        bar('GiB', n.memoryMb.used, n.memoryMb.total, gib),
        n.slots.total === null ? null : bar('slots', n.slots.used, n.slots.total, count),
        (n.gpuDevices ?? []).length === 0
          ? null
          : h(
              'div',
              { class: 'gpus' },
              ...(n.gpuDevices ?? []).map((g) =>
                h('span', { class: `gpu${g.jobId === null ? '' : ' held'}`, 'data-gpu': g.id, 'data-holder': g.jobId ?? '', title: `GPU ${g.id} ${g.model} ${gib(g.memoryMb)} GiB, nvlink ${g.nvlinkDomain}${g.jobId === null ? ', free' : `, held by ${g.jobId}`}`, style: g.jobId === null ? null : `background:${colourOf(g.jobId)}` }, String(g.id)),
              ),
            ),
        h('div', { class: 'jobs-on' }, ...(n.jobs.length === 0 ? [h('small', {}, 'idle')] : n.jobs.flatMap((j, i) => [i === 0 ? '' : ' ', jobLink(j)]))),
      ),
    ),
  );
}

function row(job: JobRow, cells: (Node | string)[]): HTMLElement {
  return h('tr', { 'data-job': job.id, 'data-status': job.status }, ...cells.map((c) => h('td', {}, c)));
}

function empty(cols: number, text: string): HTMLElement {
  return h('tr', {}, h('td', { class: 'empty', colspan: cols }, text));
}

function renderJobs(): void {
  const pending = jobs.filter((j) => j.status === 'pending');
  const running = jobs.filter((j) => j.status === 'running');
  const finished = jobs.filter((j) => j.status !== 'pending' && j.status !== 'running').slice(-50).reverse();
  const leftOut = jobsLeftOut === 0 ? '' : ` · ${jobsLeftOut} more jobs than one reply carries, not counted`;
  fill('queue-sum', `${pending.length} pending · ${running.length} running · ${jobs.length - pending.length - running.length} finished${leftOut}`);
  const tbody = (id: string): HTMLElement => document.querySelector(`#${id} tbody`) as HTMLElement;
  tbody('pending').replaceChildren(
    ...(pending.length === 0
      ? [empty(7, 'nothing waits')]
      : pending.slice(0, ROWS_MAX).map((j) => row(j, [jobLink(j.id), j.user, j.queue, String(j.priority), j.minSize === undefined ? String(j.members) : `${j.minSize}-${j.count ?? j.members}`, j.reason === null ? h('small', {}, 'not tried yet') : tag(j.reason, 'pending'), j.expectedStart == null ? '—' : clock(j.expectedStart)]))),
    ...(pending.length > ROWS_MAX ? [empty(7, `and ${pending.length - ROWS_MAX} more pending`)] : []),
  );
  tbody('running').replaceChildren(
    ...(running.length === 0 ? [empty(5, 'nothing runs')] : running.slice(0, ROWS_MAX).map((j) => row(j, [jobLink(j.id), j.user, j.queue, j.minSize === undefined ? String(j.members) : `${j.size ?? '?'}/${j.count ?? j.members}`, j.nodes.join(', ')]))),
    ...(running.length > ROWS_MAX ? [empty(5, `and ${running.length - ROWS_MAX} more running`)] : []),
  );
  tbody('finished').replaceChildren(...(finished.length === 0 ? [empty(4, 'none yet')] : finished.map((j) => row(j, [jobLink(j.id), j.user, tag(j.status), j.reason ?? '']))));
  renderQueues(tbody('queues'));
  const reserved = pending.filter((j) => j.expectedStart != null);
  fill('reservations', ...(reserved.length === 0 ? [h('li', { class: 'none' }, h('small', {}, 'no reservations'))] : reserved.map((j) => h('li', { 'data-reservation': j.id }, jobLink(j.id), ` expected to start ${clock(j.expectedStart as number)}`))));
}

/** Used / guaranteed / max of one resource (- where the queue does not name it). */
function quota(q: QueueRow, r: 'gpus' | 'cpu', unit: (n: number) => string): string {
  const named = (n: number | undefined): string => (n === undefined ? '-' : unit(n));
  return `${unit(q.used[r])}/${named(q.guaranteed[r])}/${named(q.max[r])}`;
}

/** The queue tree from the scheduler (muster.api.queues.list): each child below its parent, indented. */
function renderQueues(body: HTMLElement): void {
  const byParent = new Map<string | null, QueueRow[]>();
  for (const q of queues) byParent.set(q.parent, [...(byParent.get(q.parent) ?? []), q]);
  const ordered: { q: QueueRow; depth: number }[] = [];
  const walk = (parent: string | null, depth: number): void => {
    for (const q of byParent.get(parent) ?? []) {
      if (depth > 16 || ordered.some((o) => o.q.name === q.name)) continue;
      ordered.push({ q, depth });
      walk(q.name, depth + 1);
    }
  };
  walk(null, 0);
  const borrowedText = (q: QueueRow): string => [q.borrowed.gpus > 0 ? `${q.borrowed.gpus} GPUs` : '', q.borrowed.cpu > 0 ? `${cores(q.borrowed.cpu)} cores` : '', q.borrowed.memoryMb > 0 ? `${gib(q.borrowed.memoryMb)} GiB` : ''].filter((t) => t !== '').join(', ') || 'nothing';
  // the cell is short (GPUs, else cores, else memory); its title says everything borrowed
  const borrowedCell = (q: QueueRow): string => (q.borrowed.gpus > 0 ? `${q.borrowed.gpus} GPU` : q.borrowed.cpu > 0 ? `${cores(q.borrowed.cpu)} c` : q.borrowed.memoryMb > 0 ? `${gib(q.borrowed.memoryMb)} GiB` : '—');
  body.replaceChildren(
    ...(ordered.length === 0
      ? [empty(7, 'no queue answers')]
      : ordered.map(({ q, depth }) => {
          const reserved = jobs.filter((j) => j.queue === q.name && j.status === 'pending' && j.expectedStart != null).length;
          const name = h('span', { style: `padding-left:${depth}em` }, q.name, q.implicit ? h('small', {}, ' (implicit)') : '');
          const borrowing = q.borrowed.gpus + q.borrowed.cpu + q.borrowed.memoryMb > 0;
          return h(
            'tr',
            { 'data-queue': q.name, 'data-borrowing': String(borrowing), title: `weight ${q.weight}${q.leaf ? '' : ', has child queues'}; borrows ${borrowedText(q)}` },
            ...[name, quota(q, 'gpus', count), quota(q, 'cpu', cores), borrowing ? tag(borrowedCell(q), 'pending') : borrowedCell(q), String(q.running), String(q.pending), String(reserved)].map((c) => h('td', {}, c)),
          );
        })),
  );
}

function renderReplicas(replicas: ReplicaRow[]): void {
  const tbody = document.querySelector('#replicas tbody') as HTMLElement;
  tbody.replaceChildren(
    ...(replicas.length === 0
      ? [empty(5, 'no replica answers')]
      : replicas.map((r) => h('tr', { 'data-replica': r.id, 'data-role': r.role, title: r.refusedBecause ?? '' }, ...[r.id, tag(r.role), String(r.term), String(r.seq), r.lag === null ? '?' : String(r.lag)].map((c) => h('td', {}, c))))),
  );
  const leaders = replicas.filter((r) => r.role === 'leader');
  fill('leader', leaders.length === 0 ? 'no leader' : `leader ${leaders.map((r) => r.id).join(', ')} (term ${leaders[0]?.term ?? 0})`);
}

function addDecision(item: FeedItem): void {
  const feed = document.getElementById('feed') as HTMLElement;
  const jobId = typeof item.event.jobId === 'string' ? item.event.jobId : null;
  const li = h('li', { 'data-decision': item.event.type, 'data-job': jobId ?? '' }, h('time', {}, clock(item.at)), jobId === null ? '' : jobLink(jobId), ' ', tag(item.event.type.replace(/^Gang|^Job/, '').toLowerCase(), item.event.type), ' ', describe(item.event));
  feed.prepend(li);
  while (feed.children.length > FEED_MAX) feed.lastElementChild?.remove();
}

async function refresh(): Promise<void> {
  // one refresh at a time; a move of the log during one asks for one more after it
  if (refreshing) {
    again = true;
    return;
  }
  refreshing = true;
  try {
    const [n, j, q] = await Promise.all([getJson<{ nodes: NodeRow[] }>('/api/nodes'), getJson<{ jobs: JobRow[]; total: number; truncated: boolean }>('/api/jobs'), getJson<{ queues: QueueRow[] }>('/api/queues')]);
    jobs = j.jobs;
    jobsLeftOut = j.truncated ? j.total - j.jobs.length : 0;
    queues = q.queues;
    renderNodes(n.nodes);
    renderJobs();
    if (openJob !== null) await showJob(openJob);
  } catch (err) {
    fill('queue-sum', `cannot read the scheduler: ${(err as Error).message}`);
  } finally {
    refreshing = false;
    if (again) {
      again = false;
      void refresh();
    }
  }
}

async function showJob(jobId: string): Promise<void> {
  const aside = document.getElementById('story') as HTMLElement;
  aside.hidden = false;
  let page: JobPage;
  try {
    page = await getJson<JobPage>(`/api/jobs/${encodeURIComponent(jobId)}`);
  } catch (err) {
    fill('story-body', h('h2', {}, jobId), h('p', {}, (err as Error).message));
    return;
  }
  const job = page.job;
  const events = page.story?.events ?? [];
  fill(
    'story-body',
    h('h2', { 'data-story-job': jobId }, jobId, ' ', job === null ? '' : tag(job.status)),
    job === null ? h('p', {}, 'no replica knows this job any more; its story from the log:') : h('p', {}, `${job.user ?? ''} · queue ${job.queue ?? '?'} · priority ${job.priority ?? 0} · ${job.members ?? '?'} members${job.nodes !== undefined && job.nodes.length > 0 ? ` · on ${job.nodes.join(', ')}` : ''}`),
    page.explanation === null ? '' : h('p', { class: 'explain', 'data-explain': '' }, page.explanation.text),
    page.explanation?.reservation === undefined ? '' : h('p', { 'data-reserved': '' }, `expected to start ${clock(page.explanation.reservation.startAt)} on ${page.explanation.reservation.hosts.join(', ')}`),
    job === null ? '' : attemptLine(job),
    outputTail(page),
    h('h3', {}, `Story from the log (${events.length} events${page.story !== null && page.story.dropped > 0 ? `, ${page.story.dropped} in the middle left out` : ''})`),
    h('ol', {}, ...events.map((e) => h('li', { 'data-story-event': e.event.type }, h('time', {}, clock(e.at)), ' ', h('b', {}, e.event.type), ' ', describe(e.event), ' ', h('code', {}, `#${e.seq}.${e.index}`)))),
  );
}

/** The gang's attempt and its last failure (DESIGN.md §15), when it has had one. */
function attemptLine(job: JobRow): HTMLElement | string {
  const f = job.lastFailure;
  if ((job.attempt ?? 0) === 0 && f === undefined) return '';
  const how = f === undefined ? '' : f.exitCode !== undefined ? `exit code ${f.exitCode}` : f.signal !== undefined ? `signal ${f.signal}` : 'failed';
  return h(
    'p',
    { 'data-attempt': String(job.attempt ?? 0) },
    `attempt ${job.attempt ?? 0}`,
    f === undefined ? '' : h('span', { 'data-last-failure': String(f.member) }, ` · last failure: member ${f.member} on ${f.node}, ${how}, at ${clock(f.at)}`),
  );
}

/** The end of the members' output: each member's latest lines, prefixed like `muster logs`. */
function outputTail(page: JobPage): HTMLElement | string {
  const lines = page.output?.lines;
  if (lines === undefined || lines.length === 0) return '';
  return h(
    'div',
    {},
    h('h3', {}, `Output (the last ${lines.length} lines; muster logs has all)`),
    h('pre', { class: 'output', 'data-output': '' }, ...lines.map((l) => h('span', { class: l.stream, 'data-member': String(l.member), 'data-attempt': String(l.attempt) }, `${l.member} | ${l.line}\n`))),
  );
}

function route(): void {
  const m = /^#job=(.+)$/.exec(location.hash);
  openJob = m === null ? null : decodeURIComponent(m[1] ?? '');
  const aside = document.getElementById('story') as HTMLElement;
  if (openJob === null) aside.hidden = true;
  else void showJob(openJob);
}

function follow(): void {
  const live = document.getElementById('live') as HTMLElement;
  const events = new EventSource('/api/events');
  events.addEventListener('open', () => {
    live.className = 'live on';
    live.textContent = 'live';
    void refresh();
  });
  events.addEventListener('error', () => {
    live.className = 'live off';
    live.textContent = 'reconnecting…';
  });
  events.addEventListener('decision', (e) => addDecision(JSON.parse((e as MessageEvent<string>).data) as FeedItem));
  let settle: number | undefined;
  events.addEventListener('advanced', (e) => {
    const { seq } = JSON.parse((e as MessageEvent<string>).data) as { seq: number };
    fill('logpos', `log #${seq}`);
    void refresh();
    // the replica answering may fold the log a moment after the dashboard read it: read once more when the log has been quiet for a moment
    window.clearTimeout(settle);
    settle = window.setTimeout(() => void refresh(), 500);
  });
  events.addEventListener('replicas', (e) => renderReplicas((JSON.parse((e as MessageEvent<string>).data) as { replicas: ReplicaRow[] }).replicas));
}

async function start(): Promise<void> {
  document.getElementById('story-close')?.addEventListener('click', () => {
    history.replaceState(null, '', location.pathname);
    route();
  });
  document.addEventListener('click', (e) => {
    const tr = (e.target as HTMLElement).closest('tr[data-job], li[data-decision]');
    const jobId = tr?.getAttribute('data-job');
    if (jobId && !(e.target as HTMLElement).closest('a')) location.hash = `job=${encodeURIComponent(jobId)}`;
  });
  window.addEventListener('hashchange', route);
  const recent = await getJson<{ decisions: FeedItem[]; log: { seq: number } }>('/api/decisions').catch(() => ({ decisions: [], log: { seq: 0 } }));
  for (const item of recent.decisions) addDecision(item);
  fill('logpos', `log #${recent.log.seq}`);
  await refresh();
  route();
  follow();
}

void start();
