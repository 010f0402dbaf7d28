// agent-machine/visualizer (Node only): our live page served on 127.0.0.1, recordings on disk, and
// the Stately inspector relays. Also part of the main entry in Node. (The statechart's layout,
// `sanitize` and the browser's Stately inspector run anywhere: they are in the browser entry.)

export type { Recorder } from "./visualizer/recording.js";
export { parseRecording, readRecording, recordEvents } from "./visualizer/recording.js";
export type { VisualizeOptions, VisualizerServer } from "./visualizer/server.js";
export type { LaterSource, WakeSource } from "./visualizer/next-wake.js";
export type { NextWake, PendingLater } from "./visualizer/wire.js";
export { visualize, visualizeRecording } from "./visualizer/server.js";
export type {
  InspectorRelay,
  InspectorRelayOptions,
  StatelyInspector,
  StatelyInspectorOptions,
} from "./visualizer/stately.js";
export { createInspectorRelay, createStatelyInspector } from "./visualizer/stately.js";
