// Types of approval-preview.js: what an approval card shows about its call.
import type { AgentMessage } from "../../core/messages.js";
import type { DiffRow } from "./diff-rows.js";

export type { DiffRow };
export type ApprovalPreview =
  | { kind: "command"; text: string }
  | { kind: "diff"; path: string; rows: DiffRow[] }
  | { kind: "args"; text: string };
export function proposingText(messages: readonly AgentMessage[], toolCallId: string): string;
export function approvalPreview(toolName: string, args: unknown): ApprovalPreview;
