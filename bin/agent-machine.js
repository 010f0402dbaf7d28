#!/usr/bin/env node
// Launcher: runs the TypeScript sources through tsx, so `npx agent-machine` works from a clone
// without a build step.
import { register } from "tsx/esm/api";

register();
await import("../cli/main.ts");
