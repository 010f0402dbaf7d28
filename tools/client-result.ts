// Moved to tools/call-answers.ts with the other rules for answers; kept for the imports that still
// name this file.
export { clientResultOf } from "./call-answers.js";
