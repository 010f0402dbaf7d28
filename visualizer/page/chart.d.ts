// Types of the statechart panel (chart.js): `agent-machine/chart`, for pages that draw a chart of their
// own (the chat example). Self-contained, as the file ships beside chart.js: a graph is what
// `layoutMachineGraph` (from `agent-machine/browser`) returns.

export const FIT_FLOOR: number;
export const MIN_SCALE: number;

/** A laid-out machine: `layoutMachineGraph(machine)` from `agent-machine/browser`. */
export interface ChartGraph {
  id: string;
  lineHeight: number;
  nodes: readonly unknown[];
  edges: readonly unknown[];
  width: number;
  height: number;
}

export interface Chart {
  /** Draws `graph`, fitted to the viewport's width. */
  draw(graph: ChartGraph | null): void;
  /** Lights the active states of `value`; `visited` maps state ids left lately to when (ms). */
  paint(value: unknown, visited?: Map<string, number>, now?: number): void;
  readonly scale: number;
  zoomIn(): void;
  zoomOut(): void;
  fit(): void;
  actualSize(): void;
}

/**
 * The statechart panel: draws a graph in `viewport` (fitted to its width), lights the active state,
 * zooms and pans; a click on a state or an edge describes it in `caption`. Style it with
 * `agent-machine/chart.css`.
 *
 * @example
 * ```ts
 * import { createChart } from "agent-machine/chart";
 * import { agentMachine, layoutMachineGraph } from "agent-machine/browser";
 *
 * const chart = createChart({ viewport, caption });
 * chart.draw(layoutMachineGraph(agentMachine));
 * chart.paint(snapshot.value);
 * ```
 */
export function createChart(elements: { viewport: HTMLElement; caption: HTMLElement }): Chart;
