// @muster/auditor/testing: the auditor's parts the cross-package tests drive directly.

export { DecisionsCheck } from '../decisionsCheck.ts';
export { lastHanded, setMaxQueuedBytes, useWorker } from '../parallelAudit.ts';
