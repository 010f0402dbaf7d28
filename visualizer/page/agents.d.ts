// Types of agents.js: the tree of agents and the wake-up words of the page's Agents panel.
import type { PageModel } from "./model.js";

export interface AgentNode {
  key: string;
  label: string;
  agentId: string;
  status: string;
  active: boolean;
  children: AgentNode[];
}
export function agentTree(model: PageModel): AgentNode;
export function wokenByText(wokenBy: { source: string; id?: string } | undefined): string;
export function nextWakeText(
  next: { at: number; scheduleId: string; when: string } | null | undefined,
  now: number,
): string;
export function laterTexts(
  pending: readonly { toolName: string; toolCallId: string; deadline?: number }[] | undefined,
  now: number,
): string[];
