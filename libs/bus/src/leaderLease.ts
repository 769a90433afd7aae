import { Kvm } from '@nats-io/kv';
import type { StoredMsg } from '@nats-io/jetstream';
import type { Bus } from './bus.ts';
import { BusError } from './busError.ts';
import { isTimeout, isWrongLastSequence } from './isWrongLastSequence.ts';
import { LEADER_BUCKET, LEADER_KEY } from './names.ts';
import { natsOf } from './natsBus.ts';
import { bucketStream } from './streamInfo.ts';

/** The lease's value: who leads and in which term. */
export interface LeaseValue {
  id: string;
  term: number;
}

/** The lease as read, with the KV revision to compare-and-set against. */
export interface LeaseRecord extends LeaseValue {
  revision: number;
}

/** A lease write that did not happen: someone else wrote first, the outcome is unknown, or anything else. */
export interface LeaseFailure {
  ok: false;
  code: 'conflict' | 'timeout' | 'error';
  cause: unknown;
}

/** The outcome of a lease write: the new revision, or why not. */
export type LeaseResult = { ok: true; revision: number } | LeaseFailure;

/**
 * Compare-and-set primitives on KV `muster_leader` key `leader`. The lease only says who should
 * try to write; MUSTER_LOG's fencing is the guarantee (on R3, nats-server 2.9.10 may let two
 * conflicting KV updates both win). Timing belongs to the caller's monotonic clock.
 */
export interface LeaderLease {
  /** The current lease, or null when there is none (never created, or released). */
  readLease(): Promise<LeaseRecord | null>;
  /** Takes the lease if nobody holds it. */
  createLease(id: string, term: number): Promise<LeaseResult>;
  /** Writes the lease if it is still at `revision` (refresh or takeover). */
  updateLease(revision: number, value: LeaseValue): Promise<LeaseResult>;
  /** Gives the lease up if it is still at `revision`, so a standby can create it at once. */
  releaseLease(revision: number): Promise<{ ok: true } | LeaseFailure>;
}

/**
 * Opens the leader lease of the `muster_leader` bucket (created by `ensureStreams`). The lease is
 * read from the bucket stream's leader (`STREAM.MSG.GET`), not by the direct get the bucket allows,
 * which any copy answers: a lagging copy would show a standby an old revision (no refresh seen).
 */
export async function openLeaderLease(bus: Bus): Promise<LeaderLease> {
  const nats = natsOf(bus);
  const kv = await new Kvm(nats.js).open(LEADER_BUCKET);
  const jsm = await nats.jsm;
  return {
    readLease: async () => toRecord(await jsm.streams.getMessage(bucketStream.kv(LEADER_BUCKET), { last_by_subj: LEASE_SUBJECT })),
    createLease: (id, term) => attempt(() => kv.create(LEADER_KEY, encode({ id, term }))),
    updateLease: (revision, value) => attempt(() => kv.update(LEADER_KEY, encode(value), revision)),
    async releaseLease(revision) {
      const r = await attempt(async () => {
        await kv.delete(LEADER_KEY, { previousSeq: revision });
        return revision;
      });
      return r.ok ? { ok: true } : r;
    },
  };
}

async function attempt(write: () => Promise<number>): Promise<LeaseResult> {
  try {
    return { ok: true, revision: await write() };
  } catch (cause) {
    return { ok: false, code: isWrongLastSequence(cause) ? 'conflict' : isTimeout(cause) ? 'timeout' : 'error', cause };
  }
}

function encode(value: LeaseValue): string {
  return JSON.stringify({ id: value.id, term: value.term });
}

const LEASE_SUBJECT = `$KV.${LEADER_BUCKET}.${LEADER_KEY}`;

// the last message of the lease's key: a put, or a delete or purge marker (`KV-Operation`)
function toRecord(sm: StoredMsg | null): LeaseRecord | null {
  const operation = sm?.header.get('KV-Operation') ?? '';
  if (sm === null || (operation !== '' && operation !== 'PUT')) return null;
  const revision = sm.seq;
  let value: unknown;
  try {
    value = sm.json();
  } catch (err) {
    throw new BusError('BAD_MESSAGE', `lease revision ${revision} is not JSON`, { seq: revision, cause: err });
  }
  const lease = value as Partial<LeaseValue> | null;
  if (typeof lease !== 'object' || lease === null || typeof lease.id !== 'string' || typeof lease.term !== 'number') {
    throw new BusError('BAD_MESSAGE', `lease revision ${revision} is not {id, term}`, { seq: revision });
  }
  return { id: lease.id, term: lease.term, revision };
}
