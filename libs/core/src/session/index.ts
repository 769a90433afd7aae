// Scheduling sessions: runSession, needsSession, nextDeadline, explain (DESIGN.md §5).
export { Deadlines, needsSession, nextDeadline } from './deadlines.ts';
export { explain } from './explain.ts';
export type { AlternativeLook, Explanation } from './explain.ts';
export { runSession, sessionSteps } from './runSession.ts';
export type { SessionResult } from './runSession.ts';
export type { AttemptInfo, AttemptOutcome, SessionOptions } from './sessionOptions.ts';
export type { SessionStats } from './sessionStats.ts';
export { dominantShare } from './dominantShare.ts';
export { runningSizeIssues } from './elasticGangs.ts';
