// agent-machine/wake (Node only): agents that wake (docs/wake.md) — one scheduler per process for
// schedules (at, every, cron in a time zone), the agent's own schedule tool, events from outside,
// tools that answer later, and a lifetime budget kept on disk for agents that outlive their process.
// Also part of the main entry in Node.
export type { AgentEventInput } from "./wake/deliver-event.js";
export { deliverEvent, WakeEventError } from "./wake/deliver-event.js";
export type { WakeDelivery, WakeMessage, WakeQueue } from "./wake/deliver-wake.js";
export { deliverWake } from "./wake/deliver-wake.js";
export type { DueSlots } from "./rules/due-slots.js";
export { dueSlots } from "./rules/due-slots.js";
export { createFileScheduleStore } from "./wake/file-schedule-store.js";
export { createFileSpendStore } from "./agent/file-spend-store.js";
export type { ScheduleWhen, StoredWhen } from "./rules/schedule-spec.js";
export { checkWhen, MIN_EVERY_MS, ScheduleError, slotAfter, slotAtOrAfter } from "./rules/schedule-spec.js";
export type { ScheduleToolReach } from "./rules/schedule-tool-logic.js";
export type { ScheduleToolOptions } from "./wake/schedule-tool.js";
export { createScheduleTool } from "./wake/schedule-tool.js";
export type {
  MissedRunPolicy,
  ScheduleRecord,
  ScheduleStore,
  WakeAs,
  WakeRecord,
} from "./wake/schedule-store.js";
export { createMemoryScheduleStore, isScheduleRecord } from "./wake/schedule-store.js";
export type {
  AgentDirectory,
  Schedule,
  ScheduleInput,
  Scheduler,
  SchedulerOptions,
  WakeReport,
} from "./wake/scheduler.js";
export { createScheduler } from "./wake/scheduler.js";
export type { LaterResultRecord } from "./rules/later-record.js";
export type {
  LaterCall,
  LaterHandle,
  LaterOutcome,
  LaterReport,
  LaterResults,
  LaterResultsOptions,
  LaterWork,
  LaterWorkContext,
} from "./wake/later-results.js";
export { createLaterResults, LaterResultError } from "./wake/later-results.js";
export type { LaterStarted, LaterToolDefinition } from "./wake/later-tool.js";
export { defineLaterTool } from "./wake/later-tool.js";
export type { WakeCause } from "./telemetry/wake-cause.js";
