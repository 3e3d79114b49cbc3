import { readFileSync } from 'node:fs';

/**
 * deploy/grafana/dashboards/fleetwatch.json as the tests read it: its panels (those inside rows
 * too), their queries and its template variables.
 */

export interface Target {
  refId?: string;
  expr?: string;
  datasource?: { type?: string; uid?: string };
  instant?: boolean;
  range?: boolean;
}

export interface Panel {
  id?: number;
  type: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { x: number; y: number; w: number; h: number };
  targets?: Target[];
  panels?: Panel[];
}

export interface Variable {
  type: string;
  name: string;
  query?: string | { query?: string };
  definition?: string;
  datasource?: { type?: string; uid?: string };
  current?: { text?: string; value?: string };
  includeAll?: boolean;
  multi?: boolean;
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Variable[] };
  __inputs: { name: string; type: string; pluginId: string }[];
  __requires: { type: string; id: string }[];
}

export const DASHBOARD_PATH = 'deploy/grafana/dashboards/fleetwatch.json';

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(new URL(`../../${DASHBOARD_PATH}`, import.meta.url), 'utf8')) as Dashboard;
}

/** Every panel, those inside rows (collapsed rows keep theirs in `panels`) included. */
export function allPanels(panels: readonly Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

/** A query variable's query (`label_values(...)`), in either shape Grafana saves it. */
export function variableQuery(variable: Variable): string | undefined {
  return typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? variable.definition);
}
