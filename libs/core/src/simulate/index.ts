export { runScenario, runScenarioText } from './runScenario.ts';
export type { ScenarioOptions, ScenarioRun } from './runScenario.ts';
export { parseScenario } from './scenario.ts';
export type { Scenario, Step } from './scenario.ts';
export type { WorkloadEntry, WorkloadScenario } from './workloadScenario.ts';
export { WorkloadRecorder } from './workloadRecorder.ts';
export type { RecordedWorkload } from './workloadRecorder.ts';
export { swfWorkload } from './swfWorkload.ts';
export type { SwfOptions, SwfRun } from './swfWorkload.ts';
