// Types of the statechart panel (chart.js), for pages that draw a chart of their own (the React example).
import type { MachineGraph } from "../machine-graph.js";

export const FIT_FLOOR: number;
export const MIN_SCALE: number;

export interface Chart {
  /** Draws `graph`, fitted to the viewport's width. */
  draw(graph: MachineGraph | null): void;
  /** Lights the active states of `value`; `visited` maps state ids left lately to when (ms). */
  paint(value: unknown, visited?: Map<string, number>, now?: number): void;
  readonly scale: number;
  zoomIn(): void;
  zoomOut(): void;
  fit(): void;
  actualSize(): void;
}

export function createChart(elements: { viewport: HTMLElement; caption: HTMLElement }): Chart;
