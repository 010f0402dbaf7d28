// Agents that wake (docs/wake.md): schedules, events from outside. Node entry (index.ts) re-exports this.
export type { AgentEventInput } from "./deliver-event.js";
export { deliverEvent, WakeEventError } from "./deliver-event.js";
export type { WakeDelivery, WakeMessage, WakeQueue } from "./deliver-wake.js";
export { deliverWake } from "./deliver-wake.js";
export type { DueSlots } from "./due-slots.js";
export { dueSlots } from "./due-slots.js";
export { createFileScheduleStore } from "./file-schedule-store.js";
export type { ScheduleWhen, StoredWhen } from "./schedule-spec.js";
export { checkWhen, MIN_EVERY_MS, ScheduleError, slotAfter, slotAtOrAfter } from "./schedule-spec.js";
export type { ScheduleToolOptions } from "./schedule-tool.js";
export { createScheduleTool } from "./schedule-tool.js";
export type { MissedRunPolicy, ScheduleRecord, ScheduleStore, WakeAs } from "./schedule-store.js";
export { createMemoryScheduleStore } from "./schedule-store.js";
export type {
  AgentDirectory,
  Schedule,
  ScheduleInput,
  Scheduler,
  SchedulerOptions,
  WakeReport,
} from "./scheduler.js";
export { createScheduler } from "./scheduler.js";
