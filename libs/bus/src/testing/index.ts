// @muster/bus/testing: internals the cross-package tests drive directly.

export { streamSeqOf } from '../pullBatches.ts';
export { StallWatch } from '../stallWatch.ts';
