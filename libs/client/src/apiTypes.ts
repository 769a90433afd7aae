// The API's wire types are defined once, in @muster/core (api/apiViews.ts), beside the state they
// are read from; the scheduler answers with them and the client reads them.
export type { Explanation, JobDetails, JobSummary, NodeSummary, QueueView, RetiredJobDetails, Submitted, UsedTotal } from '@muster/core';
