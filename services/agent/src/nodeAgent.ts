import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { DECISIONS_STREAM, sleep, subjectCount, subjectMessages, subjects } from '@muster/bus';
import type { Bus, StreamMessage, SubjectCount } from '@muster/bus';
import type { BindMessage, NodeSpec, StopMessage } from '@muster/core';
import type { Logger } from 'pino';
import { memberGpuIds, parseAgentMessage } from './agentMessages.ts';
import { DeliveryCensus } from './deliveryCensus.ts';
import { gangFilePaths, writeGangFiles } from './gangFiles.ts';
import { createInputReporter } from './inputReporter.ts';
import type { LedgerEntry, MemberKey, MemberLedger } from './memberLedger.ts';
import { memberEnvironment } from './memberEnvironment.ts';
import { memberOutput } from './memberOutput.ts';
import { launchMember } from './memberProcess.ts';
import type { MemberExit, MemberHandle } from './memberProcess.ts';
import type { OutputPublisher } from './outputPublisher.ts';

/** What one node's agent needs; every dependency is handed in. */
export interface NodeAgentDeps {
  bus: Bus;
  node: NodeSpec;
  /** This boot of the agent (part of every input's msg id). */
  bootId: string;
  logger: Logger;
  heartbeatMs: number;
  /** Simulate every member (commands are not run): each finishes after the job's `runtimeMs`. */
  simulate: boolean;
  /** How long a simulated member runs when the bind carries no `runtimeMs`. */
  defaultRuntimeMs: number;
  /** Milliseconds between SIGTERM and SIGKILL when a member is stopped. */
  stopGraceMs: number;
  /**
   * Longest a member waits for the members still on its GPU devices (told to stop, or about to be)
   * to exit before it starts anyway (default: the grace plus 5 s for the kill to take).
   */
  deviceWaitMs?: number;
  ledger: MemberLedger;
  /** Folder for the members' output files (`<jobId>.<member>.out`); null: no files. */
  outputDir: string | null;
  /** Where members' output lines are published (MUSTER_OUTPUT); null: not published. */
  output: OutputPublisher | null;
  /** Folder under which the gangs' hostfiles and gang files are written (`gangs/<jobId>.<session>/`). */
  filesDir: string;
  /**
   * A reader silent this long is checked against a count of its subject, and resubscribed when the
   * stream holds more for it (default 3000); the checks of a reader that stays silent and whole
   * back off, doubling up to `censusMs`.
   */
  stallMs?: number;
  /** How often a reader that was given messages since its last count is counted again (default 30000). */
  censusMs?: number;
  /** Counts one subject of MUSTER_DECISIONS (default `subjectCount`; tests hand in one that counts the counts). */
  count?: (subject: string) => Promise<SubjectCount>;
  /** Reads one subject of MUSTER_DECISIONS from a sequence on (default `subjectMessages`; tests hand in one that loses messages). */
  read?: (subject: string, fromSeq: number, signal: AbortSignal) => AsyncIterable<StreamMessage>;
}

/** A running agent for one node. */
export interface NodeAgent {
  readonly nodeId: string;
  /** Resolves once the node's register input is acknowledged. */
  readonly registered: Promise<void>;
  /** Members running now. */
  running(): number;
  /** The environment muster gave a member running now (or waiting for its devices), simulated or real. */
  memberEnv(jobId: string, member: number): Record<string, string> | undefined;
  /** Ends heartbeats and consumers and stops running members (they run again after a restart). */
  stop(): Promise<void>;
}

interface Running {
  session: number;
  /** MUSTER_DECISIONS sequence of the bind that started it. */
  bindSeq: number;
  /** Null while it waits for its devices to be free. */
  handle: MemberHandle | null;
  stopped: boolean;
  /** muster's variables for it. */
  env: Record<string, string>;
}

/** A member's process from its start to its exit (a stopped one stays here until it has exited). */
interface Live {
  /** `<jobId>/<member>`: an elastic gang may bind a member number again after it was stopped. */
  key: string;
  gpuIds: readonly number[];
  exited: Promise<unknown>;
}

/** How long the kill of a stopped member may take, past its grace, before a member waiting for its devices starts anyway. */
const KILL_WAIT_MS = 5_000;

const RESUBSCRIBE_MS = 1_000;

/** Heartbeats between two registers of a node the leader answered as lost (a register is ingested well within them). */
const REJOIN_GAP_HEARTBEATS = 10;
/**
 * Milliseconds of heartbeats answered "no responders" (no replica listens through this agent's NATS
 * server: a node cut off from its peers) before the agent moves to a server through which one does;
 * well within the scheduler's heartbeat timeout (10 s by default), so that the node is not lost.
 */
const UNHEARD_MOVE_MS = 3_000;

/**
 * Starts the agent of one node: registers it, heartbeats on core NATS, and follows
 * `muster.bind.<id>` and `muster.stop.<id>` from the start, running bound members (skipping those
 * its ledger says finished or stopped) and reporting each exit as a `done` input. Binds and stops
 * come through two consumers (nats-server 2.9 takes one filter subject each, and `muster.*.<id>` is
 * not a subset of the stream's subjects there), so they are put in order by stream sequence: the
 * stops stored so far are read before any bind, and a bind older than a stop of its member is not run.
 * A member starts on a GPU device only after every member still on it has exited (DESIGN.md §12:
 * a preemptor's bind can arrive before, or just after, the victims' stop), bounded by `deviceWaitMs`.
 * An elastic gang (§13) gets a Bind with only the members it grew by, a Stop with only those it
 * gave up, and may bind a stopped member number again: that runs anew, once its old process is gone.
 */
export function startNodeAgent(deps: NodeAgentDeps): NodeAgent {
  const nodeId = deps.node.id;
  const log = deps.logger.child({ component: 'agent', nodeId });
  const abort = new AbortController();
  // every report still retrying (NATS away) sleeps on this signal, one listener each, and a node
  // with more than ten of them made Node.js warn of a leak (MaxListenersExceededWarning in the
  // soaks); each listener goes when its sleep ends
  setMaxListeners(0, abort.signal);
  const reporter = createInputReporter({ bus: deps.bus, nodeId, bootId: deps.bootId, logger: log, signal: abort.signal });
  const running = new Map<string, Running>();
  const live = new Set<Live>();
  const deviceWaitMs = deps.deviceWaitMs ?? deps.stopGraceMs + KILL_WAIT_MS;
  // per member, the sequence of the latest stop seen: a bind older than it must not run
  const stoppedAt = new Map<string, number>();
  const pending = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>): void => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  const keyOf = (k: MemberKey): string => `${k.jobId}/${k.member}`;

  const report = async (key: MemberKey, entry: LedgerEntry & { msgId: string; ok: boolean }): Promise<void> => {
    const { ok, exitCode, signal, attempt } = entry;
    const body = { jobId: key.jobId, member: key.member, ok, ...(exitCode === undefined ? {} : { exitCode }), ...(signal === undefined ? {} : { signal }), ...(attempt === undefined ? {} : { attempt }) };
    const seq = await reporter.send('done', body, entry.msgId);
    if (seq === null) return;
    deps.ledger.set(key, { ...entry, reported: true });
    log.debug({ ...body, inputSeq: seq }, 'member reported done');
  };

  const startMember = (bind: BindMessage, bindSeq: number, part: BindMessage['parts'][number], index: number): void => {
    const member = part.members[index] as number;
    const key = { jobId: bind.jobId, member };
    const k = keyOf(key);
    const recorded = deps.ledger.get(key);
    if (recorded !== undefined && recorded.session >= bind.session) return;
    if ((stoppedAt.get(k) ?? 0) > bindSeq) {
      // stopped before this agent got to run it
      deps.ledger.set(key, { session: bind.session, state: 'stopped' });
      return;
    }
    const current = running.get(k);
    if (current !== undefined) {
      if (current.session >= bind.session) return;
      // a newer commit of the same member replaces one whose stop never came
      current.stopped = true;
      if (current.handle !== null) track(current.handle.stop(deps.stopGraceMs));
    }
    const gpuIds = memberGpuIds(part, index);
    const files = bind.gang === undefined ? undefined : gangFilePaths(deps.filesDir, bind.jobId, bind.session);
    const env = memberEnvironment({ jobId: bind.jobId, member, role: part.role, nodeId, gpuIds, ...(bind.gang === undefined ? {} : { gang: bind.gang }), ...(part.env === undefined ? {} : { env: part.env }), ...(files === undefined ? {} : { files }) });
    const entry: Running = { session: bind.session, bindSeq, handle: null, stopped: false, env };
    running.set(k, entry);
    // never two members on one device, nor two processes of one member (an elastic gang re-binds a
    // member number it gave up, DESIGN.md §13): the ones still there (stopped, or whose stop is on
    // its way) exit first
    const holders = [...live].filter((l) => l.key === k || l.gpuIds.some((g) => gpuIds.includes(g)));
    if (holders.length === 0) {
      launch(bind, part, key, gpuIds, entry);
      return;
    }
    log.info({ jobId: bind.jobId, member, gpuIds, holders: holders.length }, 'member waits for its devices (or its own earlier process) to be free');
    track(
      (async () => {
        const exited = Promise.all(holders.map((h) => h.exited)).then(() => true);
        const waited = new AbortController();
        const expired = sleep(deviceWaitMs, AbortSignal.any([abort.signal, waited.signal])).then(() => false);
        const free = await Promise.race([exited, expired]);
        waited.abort();
        // stopped while it waited (or the agent stops): it never starts
        if (entry.stopped || abort.signal.aborted || running.get(k) !== entry) return;
        if (!free) log.error({ jobId: bind.jobId, member, gpuIds, waitedMs: deviceWaitMs }, 'devices still held by a member that did not exit in time; starting anyway');
        launch(bind, part, key, gpuIds, entry);
      })(),
    );
  };

  const launch = (bind: BindMessage, part: BindMessage['parts'][number], key: MemberKey, gpuIds: number[], entry: Running): void => {
    const { member } = key;
    const k = keyOf(key);
    const command = deps.simulate ? undefined : part.command;
    const attempt = bind.gang?.attempt ?? 0;
    const output =
      command === undefined || (deps.outputDir === null && deps.output === null)
        ? null
        : memberOutput({ file: deps.outputDir === null ? null : join(deps.outputDir, `${bind.jobId}.${member}.out`), publisher: deps.output, jobId: bind.jobId, member, attempt });
    const handle = launchMember({
      ...(command === undefined ? {} : { command }),
      env: entry.env,
      runtimeMs: bind.runtimeMs ?? deps.defaultRuntimeMs,
      output,
    });
    entry.handle = handle;
    const proc: Live = { key: k, gpuIds, exited: handle.exited };
    live.add(proc);
    log.info({ jobId: bind.jobId, member, role: part.role, gpuIds, real: handle.real }, 'member started');
    track(
      handle.exited.then(async (exit) => {
        live.delete(proc);
        if (running.get(k) === entry) running.delete(k);
        // a stopped member was released by the scheduler already: nothing to report
        if (entry.stopped) return;
        log.info({ jobId: bind.jobId, member, attempt, ...exit }, 'member finished');
        const done = { session: bind.session, state: 'done' as const, ok: exit.ok, reported: false, msgId: reporter.nextMsgId('done'), ...exitFields(exit), ...(bind.gang === undefined ? {} : { attempt }) };
        deps.ledger.set(key, done);
        await report(key, done);
      }),
    );
  };

  const onBind = (bind: BindMessage, seq: number): void => {
    // real members find their gang's files in place before they start (a simulated one reads
    // nothing); written once per bind, and again if the bind is read again
    if (!deps.simulate && bind.gang !== undefined && bind.parts.some((p) => p.command !== undefined)) {
      try {
        writeGangFiles(gangFilePaths(deps.filesDir, bind.jobId, bind.session), bind.jobId, bind.gang);
      } catch (err) {
        log.error({ err, jobId: bind.jobId }, 'cannot write the gang files; its members start without them');
      }
    }
    for (const part of bind.parts) {
      for (let index = 0; index < part.members.length; index++) startMember(bind, seq, part, index);
    }
  };

  const onStop = (stop: StopMessage, seq: number): void => {
    for (const member of stop.members) {
      const key = { jobId: stop.jobId, member };
      const k = keyOf(key);
      stoppedAt.set(k, Math.max(seq, stoppedAt.get(k) ?? 0));
      const current = running.get(k);
      // a stop older than the bind that started the member was meant for an earlier commit
      if (current === undefined || current.bindSeq > seq) continue;
      current.stopped = true;
      running.delete(k);
      deps.ledger.set(key, { session: current.session, state: 'stopped' });
      log.info({ jobId: stop.jobId, member, reason: stop.reason, started: current.handle !== null }, 'stopping member');
      if (current.handle !== null) track(current.handle.stop(deps.stopGraceMs));
    }
  };

  const handle = (m: { seq: number; subject: string; data: Uint8Array }): void => {
    const message = parseAgentMessage(m.data);
    if (message === null) log.warn({ subject: m.subject, seq: m.seq }, 'unreadable bind or stop message; skipped');
    else if (message.type === 'Bind') onBind(message, m.seq);
    else onStop(message, m.seq);
  };

  // How many messages the stream holds on a subject (the agent may read stream info, nothing more).
  const countOn = deps.count ?? ((subject: string): Promise<SubjectCount> => subjectCount(deps.bus, DECISIONS_STREAM, subject));

  // Per subject, what its reader was given against what the stream holds there.
  const censuses = new Map<string, DeliveryCensus>();
  const stallMs = deps.stallMs ?? 3_000;
  const censusMs = deps.censusMs ?? 30_000;
  const read = deps.read ?? ((subject: string, fromSeq: number, signal: AbortSignal) => subjectMessages(deps.bus, DECISIONS_STREAM, subject, { fromSeq, signal }));

  // Reads one subject from `fromSeq` on, without end, resubscribing after errors (NATS away, no
  // stream yet) and when its reader was given fewer messages than the stream holds there: silent
  // while the stream holds more (a consumer can stall when a NATS node restarts), or short of a
  // count taken every `censusMs` while messages keep coming. It first resumes after the last
  // message given; still short after that, its consumer skipped messages (one served from a copy
  // with a hole, as a NATS node refilling its store has), and the subject is read again from its
  // start. That replay is idempotent: the ledger, the running members and the stops seen decide.
  // A message before the next one expected (re-delivered) is neither handled nor counted.
  const follow = async (subject: string, fromSeq: number, until?: number): Promise<number> => {
    let census = censuses.get(subject);
    if (census === undefined) censuses.set(subject, (census = new DeliveryCensus()));
    let next = fromSeq;
    let seen = 0;
    let resumed = false;
    let fromStart = false;
    while (!abort.signal.aborted) {
      if (fromStart) {
        next = 1;
        seen = 0;
        census.restart();
        fromStart = false;
      }
      const attempt = new AbortController();
      const stopAttempt = (): void => attempt.abort();
      abort.signal.addEventListener('abort', stopAttempt, { once: true });
      const judge = (short: boolean | null): void => {
        if (short === null || attempt.signal.aborted) return;
        if (!short) {
          resumed = false;
          return;
        }
        if (resumed) log.warn({ subject }, 'bind or stop reader skipped messages; reading the subject again from its start');
        else log.warn({ subject, next }, 'bind or stop reader stalled; resubscribing');
        fromStart = resumed;
        resumed = !resumed;
        attempt.abort();
      };
      // A count walks every subject of MUSTER_DECISIONS on nats-server 2.9.10 (one per job): at 291
      // simulated nodes, each reader counted every 3 s while silent kept the stream's leader busy
      // and its publishes late. So a silent reader whose count matched waits twice as long for the
      // next (up to censusMs), and one that keeps receiving is counted every censusMs.
      let lastMessage = performance.now();
      let lastCheck = lastMessage;
      let silentEvery = stallMs;
      let asking = false;
      const watchdog = setInterval(() => {
        const now = performance.now();
        const silent = now - lastMessage >= stallMs;
        // counted already in this silence: back off; silent since: count now; receiving: every censusMs
        const again = silent && lastCheck >= lastMessage;
        const wait = again ? silentEvery : silent ? 0 : censusMs;
        if (asking || (!resumed && now - lastCheck < wait)) return;
        silentEvery = again ? Math.min(silentEvery * 2, censusMs) : stallMs;
        lastCheck = now;
        asking = true;
        census.ask();
        countOn(subject)
          .then((count) => {
            // an answer for a reader since replaced would judge the new one's count
            if (!attempt.signal.aborted) judge(census.answer(count, silent));
          }, () => undefined)
          .finally(() => (asking = false));
      }, stallMs);
      try {
        if (until === 0) return next;
        for await (const m of read(subject, next, attempt.signal)) {
          // given already: a consumer placed on a NATS node refilling its store can deliver from the
          // subject's start whatever it was asked for (nats-server 2.9.10); counted again, such a
          // re-delivery would cover a message the reader skipped, and the census would miss it
          if (m.seq < next) continue;
          lastMessage = performance.now();
          next = m.seq + 1;
          judge(census.record(m.seq));
          handle(m);
          seen += 1;
          if (until !== undefined && (seen >= until || m.pending === 0)) return next;
        }
      } catch (err) {
        if (abort.signal.aborted) break;
        log.warn({ err, subject, fromSeq: next }, 'cannot read binds or stops yet; retrying');
      } finally {
        clearInterval(watchdog);
        // a count still on its way belongs to this reader, not to the next
        attempt.abort();
        census.forget();
        abort.signal.removeEventListener('abort', stopAttempt);
      }
      await sleep(RESUBSCRIBE_MS, abort.signal);
    }
    return next;
  };

  const stopSubject = subjects.stop(nodeId);
  const storedStops = async (): Promise<number> => {
    while (!abort.signal.aborted) {
      try {
        return (await countOn(stopSubject)).messages;
      } catch (err) {
        log.warn({ err }, 'cannot read the decisions stream yet; retrying');
        await sleep(RESUBSCRIBE_MS, abort.signal);
      }
    }
    return 0;
  };

  const followAll = async (): Promise<void> => {
    // the stops stored so far first, so that a replayed bind knows whether it was stopped since
    const stopsFrom = await follow(stopSubject, 1, await storedStops());
    if (abort.signal.aborted) return;
    await Promise.all([follow(subjects.bind(nodeId), 1), follow(stopSubject, stopsFrom)]);
  };

  // The leader answers a heartbeat from a node it holds as lost (heartbeats that stopped reaching
  // it during a partition or a pause, or an operator's `lost`): only a register brings the node
  // back, so the agent sends one, one at a time and at most every REJOIN_GAP_HEARTBEATS beats.
  const lostInbox = deps.bus.inbox();
  let rejoinedAt = -Infinity;
  let rejoining = false;
  const rejoin = (): void => {
    if (rejoining || abort.signal.aborted || performance.now() - rejoinedAt < REJOIN_GAP_HEARTBEATS * deps.heartbeatMs) return;
    rejoining = true;
    rejoinedAt = performance.now();
    log.warn('the leader holds this node as lost: registering it again');
    track(
      reporter
        .send('register', deps.node)
        .then((seq) => {
          if (seq !== null) log.info({ inputSeq: seq }, 'node registered again');
        })
        .finally(() => {
          rejoining = false;
        }),
    );
  };
  // with no replica listening through this agent's server, the server itself answers a heartbeat's
  // reply subject (an empty "no responders" status): heartbeats so answered for UNHEARD_MOVE_MS in a
  // row move the connection to a server through which a replica hears them, if one does (a NATS
  // node cut off from its peers); the leader's own answer is the lost one
  let unheard = false;
  let unheardSince: number | null = null;
  const lostAnswers = deps.bus.subscribe(lostInbox, (msg) => {
    if (msg.noResponders === true) unheard = true;
    else if (isLostAnswer(msg.text())) rejoin();
  });
  const moveIfUnheard = (): void => {
    const now = performance.now();
    unheardSince = unheard ? (unheardSince ?? now - deps.heartbeatMs) : null;
    unheard = false;
    if (unheardSince === null || now - unheardSince < UNHEARD_MOVE_MS) return;
    unheardSince = null;
    track(
      deps.bus.moveToListener(subjects.heartbeat(nodeId), '{}').then((server) => {
        if (server !== null) log.warn({ server }, 'no replica heard this node\'s heartbeats through its NATS server: moved to one through which a replica does');
      }),
    );
  };

  const heartbeat = (): void => {
    if (deps.bus.isClosed()) return;
    moveIfUnheard();
    try {
      deps.bus.publish(subjects.heartbeat(nodeId), '{}', lostInbox);
    } catch (err) {
      log.debug({ err }, 'heartbeat not sent');
    }
  };

  for (const { key, entry } of deps.ledger.unreported()) {
    const { msgId, ok } = entry;
    if (msgId !== undefined && ok !== undefined) track(report(key, { ...entry, msgId, ok }));
  }
  const registered = reporter.send('register', deps.node).then((seq) => {
    if (seq !== null) log.info({ inputSeq: seq }, 'node registered');
  });
  heartbeat();
  const timer = setInterval(heartbeat, deps.heartbeatMs);
  const following = followAll();

  return {
    nodeId,
    registered,
    running: () => [...running.values()].filter((r) => r.handle !== null).length,
    memberEnv: (jobId, member) => running.get(keyOf({ jobId, member }))?.env,
    async stop() {
      clearInterval(timer);
      lostAnswers.unsubscribe();
      abort.abort();
      for (const entry of running.values()) {
        entry.stopped = true;
        if (entry.handle !== null) track(entry.handle.stop(deps.stopGraceMs));
      }
      running.clear();
      await following;
      await registered;
      await Promise.allSettled([...pending]);
    },
  };
}

/** The exit code and signal of an exit, as a `done` input carries them. */
function exitFields(exit: MemberExit): { exitCode?: number; signal?: string } {
  return { ...(exit.exitCode === null ? {} : { exitCode: exit.exitCode }), ...(exit.signal === null ? {} : { signal: exit.signal }) };
}

/** Whether a heartbeat's answer is the leader's `{"status":"lost"}`. */
function isLostAnswer(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as unknown;
    return typeof parsed === 'object' && parsed !== null && (parsed as { status?: unknown }).status === 'lost';
  } catch {
    return false;
  }
}
