import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastLogSequence, requestAll, subjects } from '@muster/bus';
import type { Bus } from '@muster/bus';
import { MusterClient, isMusterError } from '@muster/client';
import type { OutputLine } from '@muster/client';
import { ID_PATTERN, JOB_STATUSES } from '@muster/core';
import { LogFollower } from './logFollower.ts';
import type { LogFollowerOptions } from './logFollower.ts';
import type { FeedItem } from './storyIndex.ts';
import { staticFiles } from './staticFiles.ts';

/** Options of `startDashboard`. */
export interface DashboardOptions {
  /** A bus connection the caller owns (left open by `close()`). */
  bus: Bus;
  /** The address to bind (default 127.0.0.1: loopback only; put a proxy with authentication in front for more). */
  host?: string;
  /** The port (default 7070; 0: any free port). */
  port?: number;
  /** Milliseconds an API request may take (default 3000). */
  timeoutMs?: number;
  /** How often connected pages get the replicas' status (default 2000 ms); it reads, never writes. */
  replicaEveryMs?: number;
  /** What the log follower keeps in memory. */
  log?: LogFollowerOptions;
  /** Told of errors that do not fail a request (the log follower retrying). */
  onError?: (err: unknown) => void;
}

/** A running dashboard. */
export interface Dashboard {
  /** Its address (`http://127.0.0.1:7070/`). */
  url: string;
  /** Stops serving and following the log. */
  close(): Promise<void>;
}

/** A replica as the page shows it: its status answer and how far behind the log's end it is. */
export interface ReplicaView {
  id: string;
  role: string;
  term: number;
  seq: number;
  lag: number | null;
  refusedBecause: string | null;
}

const MAX_URL = 2048;
/** Lines of a job's output its story shows, at most. */
const TAIL_LINES = 50;
/** Batches the tail reads at most past the oldest of the members' latest batches (a member silent long ago while others print). */
const TAIL_MAX_BATCHES = 500;
const MAX_STREAMS = 64;
const STATUSES: ReadonlySet<string> = new Set(JOB_STATUSES);
const SECURITY_HEADERS = {
  // the page loads only its own files and talks only to this server: no external request can happen
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** An HTTP failure with a status and a stable code. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Serves muster's dashboard: the page, a JSON API read from the replicas' request/reply API
 * (`/api/nodes`, `/api/jobs`, `/api/jobs/<id>`, `/api/queues`, `/api/replicas`, `/api/decisions`) and a
 * server-sent event stream (`/api/events`: decisions from the log as they land, log progress,
 * replica status). Bad input gets a 4xx with a JSON `{error: {code, message}}`.
 */
export async function startDashboard(opts: DashboardOptions): Promise<Dashboard> {
  const files = staticFiles();
  const client = new MusterClient(opts.bus, { timeoutMs: opts.timeoutMs ?? 3000 });
  const follower = new LogFollower(opts.bus, opts.log);
  follower.start((err) => opts.onError?.(err));

  const replicas = async (): Promise<ReplicaView[]> => {
    const [replies, last] = await Promise.all([
      requestAll(opts.bus, subjects.allReplicasStatus, '', { waitMs: 300 }),
      lastLogSequence(opts.bus).catch(() => null),
    ]);
    const views: ReplicaView[] = [];
    for (const reply of replies) {
      try {
        const s = reply.json<Record<string, unknown>>();
        if (typeof s.id !== 'string') continue;
        const seq = typeof s.seq === 'number' ? s.seq : 0;
        views.push({
          id: s.id,
          role: typeof s.role === 'string' ? s.role : 'unknown',
          term: typeof s.term === 'number' ? s.term : 0,
          seq,
          lag: last === null ? null : Math.max(0, last - seq),
          refusedBecause: typeof s.refusedBecause === 'string' ? s.refusedBecause : null,
        });
      } catch {
        // a reply that is not a status is not a replica
      }
    }
    return views.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  };

  // pages refresh together when the log moves: one API request answers all those within 200 ms
  const shared = new Map<string, { at: number; answer: Promise<unknown> }>();
  const once = (what: string, ask: () => Promise<unknown>): Promise<unknown> => {
    // an answer is shared only within one log position: a page told of a newer one asks again
    const key = `${what}@${follower.progress().seq}`;
    const now = performance.now();
    const hit = shared.get(key);
    if (hit !== undefined && now - hit.at < 200) return hit.answer;
    const answer = ask();
    for (const [k, v] of shared) if (now - v.at >= 200) shared.delete(k);
    shared.set(key, { at: now, answer });
    answer.catch(() => shared.delete(key));
    return answer;
  };

  // the tail of a job's output (DESIGN.md §15): the last TAIL_LINES lines from the oldest of its
  // members' latest batches in MUSTER_OUTPUT on (each member's latest lines are in, whatever it
  // printed them on), reading at most TAIL_MAX_BATCHES batches, else only the latest batches;
  // null when the stream cannot be read (not created yet, not allowed)
  const outputTail = async (jobId: string): Promise<{ lines: OutputLine[] } | null> => {
    const keep = (lines: OutputLine[], line: OutputLine): void => {
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
    };
    try {
      const latest: OutputLine[] = [];
      let from = Infinity;
      for await (const line of client.logs(jobId, { latest: true })) {
        from = Math.min(from, line.seq);
        keep(latest, line);
      }
      if (latest.length === 0) return { lines: [] };
      const lines: OutputLine[] = [];
      let batches = 0;
      let seq = -1;
      for await (const line of client.logs(jobId, { fromSeq: from })) {
        // too much since the oldest member's latest batch: the latest batches alone
        if (line.seq !== seq && ++batches > TAIL_MAX_BATCHES) return { lines: latest };
        seq = line.seq;
        keep(lines, line);
      }
      return { lines };
    } catch {
      return null;
    }
  };

  const api = async (path: string, query: URLSearchParams): Promise<unknown> => {
    if (path === '/api/nodes') {
      onlyParams(query, []);
      return once('nodes', async () => {
        const listed = await client.nodeList();
        return { nodes: listed.items, total: listed.total, truncated: listed.truncated };
      });
    }
    if (path === '/api/jobs') {
      onlyParams(query, ['status']);
      const status = query.get('status');
      if (status !== null && !STATUSES.has(status)) throw new HttpError(400, 'invalid', `status must be one of ${JOB_STATUSES.join(', ')}`);
      return once(`jobs:${status ?? ''}`, async () => {
        const listed = await client.jobList(status === null ? {} : { status });
        return { jobs: listed.items, total: listed.total, truncated: listed.truncated };
      });
    }
    if (path.startsWith('/api/jobs/')) {
      onlyParams(query, []);
      const jobId = decodeSegment(path.slice('/api/jobs/'.length));
      if (!ID_PATTERN.test(jobId)) throw new HttpError(400, 'invalid', `a job id matches ${ID_PATTERN.source}`);
      const [job, explanation, output] = await Promise.all([client.job(jobId).catch(notFoundAsNull), client.explain(jobId).catch(notFoundAsNull), outputTail(jobId)]);
      const story = follower.story(jobId);
      if (job === null && story === null) throw new HttpError(404, 'not-found', `no replica and no log entry since sequence ${follower.progress().fromSeq} knows job ${jobId}`);
      return { job, explanation, story, output, log: follower.progress() };
    }
    if (path === '/api/queues') {
      onlyParams(query, []);
      return once('queues', async () => ({ queues: await client.queues() }));
    }
    if (path === '/api/replicas') {
      onlyParams(query, []);
      return { replicas: await replicas(), log: follower.progress() };
    }
    if (path === '/api/decisions') {
      onlyParams(query, []);
      return { decisions: follower.decisions(), log: follower.progress() };
    }
    throw new HttpError(404, 'not-found', `no such route: ${path}`);
  };

  // the pages following live, each with how to send it an event
  const senders = new Map<ServerResponse, (event: string, data: unknown) => void>();
  // one poll of the replicas' status for every page that follows live, and none while no page does:
  // each status answer hashes the replica's state
  let lastReplicas: { replicas: ReplicaView[] } | null = null;
  let poll: NodeJS.Timeout | null = null;
  const pollReplicas = (): void => {
    replicas().then(
      (r) => {
        lastReplicas = { replicas: r };
        for (const send of senders.values()) send('replicas', lastReplicas);
      },
      () => undefined,
    );
  };
  const startPolling = (): void => {
    if (poll !== null) return;
    pollReplicas();
    poll = setInterval(pollReplicas, opts.replicaEveryMs ?? 2000);
  };
  const stopPolling = (): void => {
    if (poll !== null) clearInterval(poll);
    poll = null;
  };

  const openStream = (res: ServerResponse): void => {
    if (senders.size >= MAX_STREAMS) throw new HttpError(503, 'busy', `at most ${MAX_STREAMS} pages follow live at once`);
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write(`retry: 1000\n\n`);
    const send = (event: string, data: unknown): void => {
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    // log progress at most every 200 ms: a page refreshes its views from the API after each
    let pendingSeq: number | null = null;
    let timer: NodeJS.Timeout | null = null;
    const flushSeq = (): void => {
      timer = null;
      if (pendingSeq !== null) send('advanced', { seq: pendingSeq });
      pendingSeq = null;
    };
    const unlisten = follower.listen({
      decision: (item: FeedItem) => send('decision', item),
      advanced: (seq) => {
        pendingSeq = seq;
        timer ??= setTimeout(flushSeq, 200);
      },
    });
    senders.set(res, send);
    if (lastReplicas !== null) send('replicas', lastReplicas);
    startPolling();
    res.on('close', () => {
      unlisten();
      if (timer !== null) clearTimeout(timer);
      senders.delete(res);
      if (senders.size === 0) stopPolling();
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = req.url ?? '/';
    if (raw.length > MAX_URL) throw new HttpError(414, 'uri-too-long', `a request target is at most ${MAX_URL} characters`);
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method-not-allowed', 'the dashboard only answers GET');
    let url: URL;
    try {
      url = new URL(raw, 'http://dashboard.invalid');
    } catch {
      throw new HttpError(400, 'invalid', 'the request target is not a URL path');
    }
    const path = url.pathname;
    const file = files.get(path);
    if (file !== undefined) {
      if (url.search !== '') throw new HttpError(400, 'invalid', `${path} takes no query`);
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': file.type, 'cache-control': 'no-cache' });
      res.end(req.method === 'HEAD' ? undefined : file.body);
      return;
    }
    if (path === '/api/events') {
      onlyParams(url.searchParams, []);
      openStream(res);
      return;
    }
    if (!path.startsWith('/api/')) throw new HttpError(404, 'not-found', `no such page: ${path}`);
    const body = JSON.stringify(await api(path, url.searchParams));
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const failure = asHttpError(err);
      if (res.headersSent) {
        res.end();
        return;
      }
      res.writeHead(failure.status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ error: { code: failure.code, message: failure.message } }));
    });
  });
  // a very long request line or header block is refused by Node itself with a 431
  server.maxHeadersCount = 64;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 7070, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}/`,
    close: () =>
      (closing ??= (async () => {
        stopPolling();
        for (const res of senders.keys()) res.end();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await follower.close();
      })()),
  };
}

function onlyParams(query: URLSearchParams, allowed: string[]): void {
  for (const key of query.keys()) {
    if (!allowed.includes(key)) throw new HttpError(400, 'invalid', `unknown query parameter ${JSON.stringify(key.slice(0, 64))}${allowed.length === 0 ? '' : `; known: ${allowed.join(', ')}`}`);
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'invalid', 'the job id is not valid percent-encoding');
  }
}

function notFoundAsNull(err: unknown): null {
  if (isMusterError(err) && err.code === 'not-found') return null;
  throw err;
}

function asHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (isMusterError(err)) {
    if (err.code === 'invalid') return new HttpError(400, 'invalid', err.message);
    if (err.code === 'not-found') return new HttpError(404, 'not-found', err.message);
    return new HttpError(503, 'unavailable', `the scheduler did not answer: ${err.message}`);
  }
  return new HttpError(500, 'internal', err instanceof Error ? err.message : String(err));
}
