// agent-machine/browser: what runs in a web page, without Node built-ins (no stand-ins for a bundler).
// Today that is the Stately inspector hook-up for agents and machines that live in the page.

export {
  createStatelyBrowserInspector,
  type InspectorSanitizeOptions,
  inspectorSanitizers,
  type StatelyBrowserInspectorOptions,
} from "./visualizer/stately-browser.js";
export { type SanitizeOptions, sanitize } from "./visualizer/sanitize.js";
