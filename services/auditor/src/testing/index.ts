// @muster/auditor/testing: the auditor's parts the cross-package tests drive directly.

export { DecisionsCheck } from '../decisionsCheck.ts';
export { InvariantChecker } from '../invariantChecker.ts';
export { lastSplit, splitPoint, useWorker } from '../parallelAudit.ts';
