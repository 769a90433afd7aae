// @muster/ui: muster's web dashboard (DESIGN.md §14): an HTTP server over the replicas'
// request/reply API and the log (through libs/bus), and the page it serves.
export { startDashboard } from './startDashboard.ts';
export type { Dashboard, DashboardOptions, ReplicaView } from './startDashboard.ts';
export type { LogFollowerOptions } from './logFollower.ts';
export type { StoryIndexLimits } from './storyIndex.ts';
