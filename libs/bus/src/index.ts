// @muster/bus: the only package that talks to NATS (DESIGN.md §2, §3, §6).
export { appendTransactions, encodeTransaction } from './appendTransactions.ts';
export type { AppendFailureCode, AppendOptions, AppendResult, EncodedTransaction } from './appendTransactions.ts';
export { BusError, isBusError, isChainBroken } from './busError.ts';
export type { BusErrorCode } from './busError.ts';
export { connect, jetStream, jetStreamManager } from './connect.ts';
export { connectionOf, connectionOptions } from './connectionOf.ts';
export type { ConnectOptions } from './connect.ts';
export { ensureStreams } from './ensureStreams.ts';
export type { EnsuredStream, EnsureStreamsOptions } from './ensureStreams.ts';
export { isAppendConflict, isTimeout, isWrongLastSequence } from './isWrongLastSequence.ts';
export { JetStreamPublisher, jetStreamPublisher } from './jetStreamPublisher.ts';
export type { PublishOptions } from './jetStreamPublisher.ts';
export { lastInputSequence, lastLogSequence } from './lastLogSequence.ts';
export { lastPublishedDecision, lastPublishedLogSeq } from './lastPublishedDecision.ts';
export type { PublishedDecision } from './lastPublishedDecision.ts';
export { openLeaderLease } from './leaderLease.ts';
export type { LeaderLease, LeaseFailure, LeaseRecord, LeaseResult, LeaseValue } from './leaderLease.ts';
export {
  DECISIONS_STREAM,
  IN_STREAM,
  LEADER_BUCKET,
  LEADER_KEY,
  LOG_SEQ_HEADER,
  LOG_STREAM,
  LOG_SUBJECT,
  MAX_TRANSACTION_BYTES,
  SNAPSHOT_BUCKET,
} from './names.ts';
export type { BatchReadOptions, OrderedReadOptions } from './orderedMessages.ts';
export { nativeStateHash, nativeStateHashInSlices, nativeTransactionHash } from './payloadHash.ts';
export { publishDecisions } from './publishDecisions.ts';
export { pullBatches, pullDecisionBatches, pullInputBatches, pullLogEntries } from './pullBatches.ts';
export type { PulledMessage } from './pullBatches.ts';
export type { DecisionMessage, PublishDecisionsResult } from './publishDecisions.ts';
export { publishInput } from './publishInput.ts';
export { readInputBatches, readInputs } from './readInputs.ts';
export type { InputFields, InputMessage, ReadInputBatchesOptions, ReadInputsOptions } from './readInputs.ts';
export { readDecisionBatches, readDecisions } from './readDecisions.ts';
export type { StoredDecision } from './readDecisions.ts';
export { readLog } from './readLog.ts';
export type { ReadLogOptions, ReadTransaction } from './readLog.ts';
export { readLogEntries } from './readLogEntries.ts';
export type { LogEntry } from './readLogEntries.ts';
export { readLogMessage } from './readLogMessage.ts';
export { listSnapshots, loadLatestSnapshot, loadSnapshot, saveSnapshot } from './snapshotStore.ts';
export type { LoadSnapshotOptions, SkippedSnapshot, Snapshot, SnapshotInfo } from './snapshotStore.ts';
export { parseStreamDefinition, streamDefinitions } from './streamDefinitions.ts';
export type { StreamDefinition, StreamDefinitionKind } from './streamDefinitions.ts';
export type { JetStreamClient, JetStreamManager, PubAck } from '@nats-io/jetstream';
export type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
