import { agentMachine } from "../index.js";
import { layoutMachineGraph } from "../visualizer/machine-graph.js";
const g = layoutMachineGraph(agentMachine);
console.log(g.width, g.height);
for (const e of g.edges) console.log(e.id.replace(/agent\.(running\.)?/g, ""), "|", e.lines.join(" / "), "|", e.route);
for (const n of g.nodes) console.log(n.id, Math.round(n.x), Math.round(n.width));
