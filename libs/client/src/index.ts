// @muster/client: the publisher SDK over @muster/bus: submit, watch, wait, cancel, close, read state and members' output.
export { MusterClient } from './musterClient.ts';
export type { Listed, LogsOptions, MusterClientOptions, Requested, SubmitOptions, WaitOptions, WatchOptions } from './musterClient.ts';
export type { OutputLine } from './outputLines.ts';
export { connectClient } from './connectClient.ts';
export type { ConnectClientOptions } from './connectClient.ts';
export { MusterError, isMusterError } from './musterError.ts';
export type { MusterErrorCode } from './musterError.ts';
export type { Explanation, JobDetails, JobSummary, NodeSummary, QueueView, RetiredJobDetails, Submitted, UsedTotal } from './apiTypes.ts';
export { parseDecision, settles } from './decisions.ts';
export type { JobDecision } from './decisions.ts';
export { submitMsgId } from '@muster/bus';
