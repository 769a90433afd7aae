// @muster/ui: muster's web dashboard (DESIGN.md §14): an HTTP server over the replicas'
// request/reply API and the log (through libs/bus), and the page it serves.
export { startDashboard } from './startDashboard.ts';
export type { Dashboard, DashboardOptions, ReplicaView } from './startDashboard.ts';
export { LogFollower } from './logFollower.ts';
export type { LogFollowerOptions, LogListener } from './logFollower.ts';
export { StoryIndex } from './storyIndex.ts';
export type { FeedItem, StoryEvent, StoryIndexLimits } from './storyIndex.ts';
export { staticFiles } from './staticFiles.ts';
export type { StaticFile } from './staticFiles.ts';
