// Types of now.js: the page's plain-words description of what the agent is doing.
import type { PageModel } from "./model.js";

export interface Now {
  text: string;
  tone: "waiting" | "running" | "stopped" | "idle" | "connecting";
  waiting: number;
}
export function stopReason(
  end: { reason: string; errorMessage?: string; errorKind?: string; rejection?: string } | null | undefined,
): { blame: "model" | "tool" | "user" | "limit" | "agent"; text: string } | undefined;
export function describeNow(model: PageModel): Now;
export function tabTitle(now: Pick<Now, "text" | "waiting">, agentId: string): string;
