import { describe, expect, it } from "vitest";
import { and, createMachine, not, or } from "xstate";
import { activeStateIds, agentMachine, layoutMachineGraph } from "../index.js";

describe("the statechart drawn from the machine definition", () => {
  const graph = layoutMachineGraph(agentMachine);
  const node = (id: string) => graph.nodes.find((n) => n.id === id)!;
  const edge = (source: string, target: string) =>
    graph.edges.find((e) => e.source === source && e.target === target);

  it("has every state of agentMachine, nested as in the machine", () => {
    const running = Object.keys(agentMachine.root.states.running!.states);
    expect(running).toEqual(
      expect.arrayContaining(["turnGate", "compacting", "streaming", "executing", "steeringCheck"]),
    );
    for (const key of running) expect(node(`agent.running.${key}`).parent).toBe("agent.running");
    expect(node("agent.running.compacting.reducing").parent).toBe("agent.running.compacting");
    expect(node("agent.running").initial).toBe("agent.running.turnGate");
    expect(node("agent.running.streaming").invokes).toEqual(["modelStream"]);
    expect(node("agent.running.executing").internal).toContain(
      "STEER: enqueueSteering, tellExecutionAboutSteering",
    );
  });

  it("draws the loop's transitions with their events and guards", () => {
    expect(edge("agent.idle", "agent.running")?.labels).toEqual(["PROMPT", "CONTINUE"]);
    expect(edge("agent.running.streaming", "agent.running.executing")?.labels).toEqual([
      "STREAM_DONE [hasToolCalls]",
    ]);
    expect(edge("agent.running.steeringCheck", "agent.running.turnGate")?.labels).toEqual([
      "CHECK [hasSteering]",
      "CHECK [turnHadToolCalls]",
    ]);
    // The usual turn's shortcuts past the transient turnGate and turnEnd (each decides the rest).
    expect(edge("agent.running.steeringCheck", "agent.running.streaming")?.labels).toEqual([
      "CHECK [nextTurnStreams]",
    ]);
    expect(edge("agent.running.executing", "agent.running.steeringCheck")?.labels).toEqual(["done"]);
    expect(edge("agent.running.executing", "agent.running.turnEnd")?.labels).toContain(
      "done [runMayEndWithTurn]",
    );
    expect(edge("agent.running.turnGate", "agent.running.ending")).toMatchObject({
      labels: ["always [limitReached]"],
      eventless: true,
    });
    expect(edge("agent.running.ending", "agent.idle")?.route).toBe("below");
  });

  it("lays the main flow out left to right, inside its parent, without overlapping boxes", () => {
    const flow = [
      "turnGate",
      "compacting",
      "streaming",
      "executing",
      "steeringCheck",
      "followUpCheck",
      "ending",
    ].map((key) => node(`agent.running.${key}`));
    for (let i = 1; i < flow.length; i++)
      expect(flow[i]!.x).toBeGreaterThanOrEqual(flow[i - 1]!.x + flow[i - 1]!.width);
    const inside = (child: string, parent: string) => {
      const c = node(child);
      const p = node(parent);
      return c.x >= p.x && c.y >= p.y && c.x + c.width <= p.x + p.width && c.y + c.height <= p.y + p.height;
    };
    for (const n of graph.nodes)
      if (n.parent && n.parent !== "agent") expect(inside(n.id, n.parent), n.id).toBe(true);
    const leaves = graph.nodes.filter((n) => !graph.nodes.some((m) => m.parent === n.id));
    for (const a of leaves) {
      for (const b of leaves) {
        if (a === b) continue;
        const apart =
          a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
        expect(apart, `${a.id} / ${b.id}`).toBe(true);
      }
    }
    for (const n of graph.nodes) expect(n.y + n.height).toBeLessThanOrEqual(graph.height);
  });

  it("shows one label per edge at first look: the first transition's event (or guard) and how many more", () => {
    for (const e of graph.edges) expect(e.lines.length, e.id).toBeLessThanOrEqual(1);
    const folded = edge("agent.running.streaming", "agent.running.turnEnd")!;
    expect(folded.labels.length).toBeGreaterThan(1);
    expect(folded.lines).toEqual([`STREAM_DONE +${folded.labels.length - 1}`]);
    expect(edge("agent.idle", "agent.running")?.lines).toEqual(["PROMPT +1"]);
    // An eventless edge shows its guard; a combining guard ("and") is passed over for a named one.
    expect(edge("agent.running.turnGate", "agent.running.ending")?.lines).toEqual(["[limitReached]"]);
    const compaction = edge("agent.running.turnGate", "agent.running.compacting")!;
    expect(compaction.lines[0]).toMatch(/^\[turnNeedsCompaction\]/);
    // Unguarded eventless hops say nothing beyond the arrow.
    expect(edge("agent.running.turnEnd", "agent.running.steeringCheck")?.lines).toEqual([]);
  });

  it("follows a machine that changes: a new state appears without touching the visualizer", () => {
    const machine = createMachine({
      id: "m",
      initial: "a",
      states: {
        a: { on: { GO: "b" } },
        b: { always: { target: "c", guard: "ready" } },
        c: { type: "final" },
      },
    });
    const small = layoutMachineGraph(machine);
    expect(small.nodes.map((n) => n.id)).toEqual(["m", "m.a", "m.b", "m.c"]);
    expect(small.edges.map((e) => [e.source, e.target, e.labels])).toEqual([
      ["m.a", "m.b", ["GO"]],
      ["m.b", "m.c", ["always [ready]"]],
    ]);
  });

  it("knows XState's and / or / not guards by shape, not by name: a bundler's renamed `and2` still reads `and`", () => {
    // What a bundler does to the guard functions of two modules that both define `and`.
    const renamed = <T extends object>(guard: T, name: string) =>
      Object.defineProperty(guard, "name", { value: name });
    const machine = createMachine({
      id: "m",
      initial: "a",
      states: {
        a: {
          always: [
            { target: "b", guard: renamed(and(["ready", "allowed"]), "and2") },
            { target: "c", guard: renamed(or(["ready", "late"]), "or3") },
            { target: "c", guard: renamed(not("ready"), "not1") },
          ],
        },
        b: {},
        c: {},
      },
    });
    const edges = layoutMachineGraph(machine).edges;
    expect(edges.map((e) => e.labels)).toEqual([["always [and]"], ["always [or]", "always [not]"]]);
    // A combining guard is passed over for a named one at first look, or shown as what it is.
    expect(edges.map((e) => e.lines)).toEqual([["[and]"], ["[or] +1"]]);
  });

  it("turns a state value into the active state ids", () => {
    expect(activeStateIds("agent", "idle")).toEqual(["agent.idle"]);
    expect(activeStateIds("agent", { running: { compacting: "reducing" } })).toEqual([
      "agent.running",
      "agent.running.compacting",
      "agent.running.compacting.reducing",
    ]);
  });
});

describe("the simple chart", () => {
  it("folds momentary states into their edges and says every event in words", () => {
    const full = layoutMachineGraph(agentMachine);
    const simple = layoutMachineGraph(agentMachine, { simple: true });
    const ids = simple.nodes.map((node) => node.id);
    // Left at once by an eventless transition, invoking nothing: folded.
    for (const momentary of ["agent.running.turnGate", "agent.running.turnEnd", "agent.running.ending"]) {
      expect(full.nodes.map((node) => node.id)).toContain(momentary);
      expect(ids).not.toContain(momentary);
    }
    // Where the machine rests or works stays.
    for (const kept of ["agent.idle", "agent.running.streaming", "agent.running.executing"])
      expect(ids).toContain(kept);
    // A run starts streaming (through the folded gate); a run's end goes back to idle.
    expect(simple.nodes.find((node) => node.id === "agent.running")!.initial).toBe("agent.running.streaming");
    const edge = (source: string, target: string) =>
      simple.edges.find((e) => e.source === `agent.${source}` && e.target === `agent.${target}`);
    expect(edge("idle", "running")!.labels).toEqual(["prompt", "continue"]);
    expect(edge("running.streaming", "running.executing")!.labels).toEqual(["stream done if has tool calls"]);
    expect(edge("running.followUpCheck", "idle")).toBeDefined();
    // Every edge joins two drawn states, and no label keeps the code's spelling.
    for (const e of simple.edges) {
      expect(ids).toContain(e.source);
      expect(ids).toContain(e.target);
      for (const label of e.labels) expect(label).not.toMatch(/[A-Z_[\]]/);
    }
    expect(simple.edges.length).toBeLessThan(full.edges.length);
  });
});
