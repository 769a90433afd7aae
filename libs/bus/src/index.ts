// @muster/bus: the only package that talks to NATS (DESIGN.md §2, §3, §6). It exports muster's
// operations and types, never nats.js's: a Bus from `connect`, and functions that take it.
export { appendTransactions, encodeTransaction } from './appendTransactions.ts';
export type { AppendFailureCode, AppendOptions, AppendResult, EncodedTransaction } from './appendTransactions.ts';
export type { Answer, Bus, BusMessage, BusSubscription, SubscribeOptions } from './bus.ts';
export { BusError, isBusError, isChainBroken } from './busError.ts';
export type { BusErrorCode } from './busError.ts';
export { JETSTREAM_LEAVE_MS, connect } from './connect.ts';
export type { ConnectOptions, ConnectionChange } from './connect.ts';
export { ensureStreams } from './ensureStreams.ts';
export type { EnsuredStream, EnsureStreamsOptions } from './ensureStreams.ts';
export { isTimeout, isWrongLastSequence } from './isWrongLastSequence.ts';
export { jetStreamPublisher } from './jetStreamPublisher.ts';
export type { PublishOptions, StreamAck, StreamPublisher } from './jetStreamPublisher.ts';
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
  MAX_TRANSACTION_BYTES,
  OUTPUT_STREAM,
  SNAPSHOT_BUCKET,
} from './names.ts';
export type { BatchReadOptions, OrderedReadOptions } from './orderedMessages.ts';
export { nativeStateHash, nativeStateHashInSlices, nativeTransactionHash, payloadHash } from './payloadHash.ts';
export { decisionLogSeq, laterPublished, publishedBefore } from './publishOrder.ts';
export type { PublishOrder } from './publishOrder.ts';
export { publishDecisions } from './publishDecisions.ts';
export type { DecisionMessage, PublishDecisionsResult } from './publishDecisions.ts';
export { pullDecisionBatches, pullInputBatches, pullLogEntries } from './pullBatches.ts';
export { publishInput } from './publishInput.ts';
export { publishOutput } from './publishOutput.ts';
export { readOutput } from './readOutput.ts';
export type { ReadOutputOptions } from './readOutput.ts';
export { readInputBatches, readInputs } from './readInputs.ts';
export type { InputFields, InputMessage, ReadInputBatchesOptions, ReadInputsOptions } from './readInputs.ts';
export { readDecisionBatches, readDecisions } from './readDecisions.ts';
export type { StoredDecision } from './readDecisions.ts';
export { readLog } from './readLog.ts';
export type { ReadLogOptions, ReadTransaction } from './readLog.ts';
export { readLogEntries } from './readLogEntries.ts';
export type { LogEntry } from './readLogEntries.ts';
export { readLogMessage } from './readLogMessage.ts';
export { requestAll } from './requestAll.ts';
export { isConnectionClosed, isNoResponders, isPermissionDenied, isStreamNotFound } from './requestErrors.ts';
export type { PermissionDenied } from './requestErrors.ts';
export { listSnapshots, loadLatestSnapshot, loadSnapshot, saveSnapshot, verifySnapshot } from './snapshotStore.ts';
export type { LoadSnapshotOptions, SkippedSnapshot, Snapshot, SnapshotInfo } from './snapshotStore.ts';
export { parseStreamDefinition, streamDefinitions } from './streamDefinitions.ts';
export type { StreamDefinition, StreamDefinitionKind, StreamSettings } from './streamDefinitions.ts';
export { bucketStream, streamCopies, streamInfo, subjectCount } from './streamInfo.ts';
export type { StreamCopy, StreamState, SubjectCount } from './streamInfo.ts';
export { subjectMessages } from './subjectMessages.ts';
export type { StreamMessage, SubjectReadOptions } from './subjectMessages.ts';
export { submitMsgId } from './submitMsgId.ts';
export { idOf, subjects } from './subjects.ts';
export type { NodeInputKind } from './subjects.ts';
export { sleep } from './sleep.ts';
export { serverFeatures } from './serverFeatures.ts';
export type { ServerFeatures } from './serverFeatures.ts';
