export { runScenario, runScenarioText } from './runScenario.ts';
export type { ScenarioRun } from './runScenario.ts';
export { parseScenario } from './scenario.ts';
export type { Scenario, Step } from './scenario.ts';
