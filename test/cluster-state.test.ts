import { describe, expect, it } from "vitest";
import {
  type ClusterLogEvent,
  clusterLogEvent,
  currentLeader,
  leaderSinceIn,
  type NodeLogState,
  settledLeader,
} from "../durable/cluster-state.js";

// Lines as restate-server 1.7 writes them with log-format = "json" (trimmed of their span fields).
const line = (at: string, message: string) =>
  JSON.stringify({ timestamp: `2026-11-28T21:49:${at}Z`, level: "INFO", fields: { message } });
const events = (...lines: [string, string][]): ClusterLogEvent[] =>
  lines.map(([at, message]) => clusterLogEvent(line(at, message))!);
const at = (seconds: string) => Date.parse(`2026-11-28T21:49:${seconds}Z`);

const BECAME = "Processor became Leader of epoch e9";
const STOPPED = "Partition processor stopped";

describe("reading a local Restate cluster's leadership from its logs", () => {
  it("keeps the leadership and membership lines, with Restate's timestamp, and nothing else", () => {
    expect(clusterLogEvent(line("06.750000", BECAME))).toEqual({
      at: "2026-11-28T21:49:06.750000Z",
      message: BECAME,
    });
    expect(
      clusterLogEvent(line("06.031", "Partition configuration transitions: [P0(v5 -> v6)]")),
    ).toBeDefined();
    expect(
      clusterLogEvent(line("05.9", "N1:4 transitioned from Suspect(since 1s ago) to Alive")),
    ).toBeDefined();
    expect(clusterLogEvent(line("05.5", "No such scanner ScannerId(N1:4, 10)"))).toBeUndefined();
    expect(clusterLogEvent("not json")).toBeUndefined();
    expect(clusterLogEvent('{"timestamp": 1, "fields": {}}')).toBeUndefined();
  });

  it("a node whose processor stopped after it became leader does not lead, though none took over yet", () => {
    // 21:49:06 in a run of the cluster test: the leader stopped its processor as the restarted
    // node's cluster controller moved the partition; the next leader came 0.7 s later.
    const stepped = events(["01.0", BECAME], ["06.031", STOPPED]);
    expect(leaderSinceIn(stepped)).toBeUndefined();
    expect(leaderSinceIn(events(["01.0", BECAME], ["04.4", "Every reign must end. Conceding to N1:4"]))).toBe(
      undefined,
    );
    expect(leaderSinceIn(events(["01.0", STOPPED], ["02.0", BECAME]))).toBe("2026-11-28T21:49:02.0Z");
    expect(currentLeader([{ running: true, events: stepped }])).toBeUndefined();
  });

  it("the newest claim of leadership wins; an older claim is stale once the newest claimant stepped down or died", () => {
    const older = { running: true, events: events(["06.750", BECAME]) };
    const newer = { running: true, events: events(["07.797", BECAME]) };
    expect(currentLeader([older, newer])).toBe(1);
    // The newest claimant's step-down line may be the only one: the older claim is not revived.
    expect(
      currentLeader([older, { running: true, events: events(["07.797", BECAME], ["09.0", STOPPED]) }]),
    ).toBe(undefined);
    expect(currentLeader([older, { ...newer, running: false }])).toBe(0);
    expect(currentLeader([{ running: true, events: [] }])).toBeUndefined();
  });

  it("settles once every node sees a restarted node alive, a node leads, and nothing changed for the quiet time", () => {
    const restarted: NodeLogState = {
      running: true,
      restarted: true,
      startedAt: at("04.5"),
      events: events(
        ["04.880", "My Node ID is N1:4"],
        ["06.682", "N1:4 transitioned from Suspect(since 1.7s ago) to Alive"],
      ),
    };
    const seeing = (...more: [string, string][]): NodeLogState => ({
      running: true,
      restarted: false,
      startedAt: at("00.0"),
      events: events(["05.937", "N1:4 transitioned from Suspect(since 1s ago) to Alive"], ...more),
    });
    const leading = seeing(["06.750", BECAME]);
    const settled = [restarted, leading, seeing()];
    expect(settledLeader(settled, at("10.0"), 3_000)).toEqual({ leader: 1 });

    // The last change (the leader's claim) came under 3 s ago: not yet.
    expect(settledLeader(settled, at("08.682"), 3_000)).toMatchObject({
      waiting: expect.stringMatching(/no change/),
    });
    // A node does not see the restarted one back yet: leadership is about to move.
    const blind: NodeLogState = { running: true, restarted: false, startedAt: at("00.0"), events: [] };
    expect(settledLeader([restarted, leading, blind], at("30.0"), 3_000)).toEqual({
      waiting: "every node to see N1:4 alive",
    });
    // Back, and nothing moved yet: its return is a change (the moves follow it), so not yet.
    const early = seeing(["01.0", BECAME]);
    expect(settledLeader([restarted, early, seeing()], at("08.0"), 3_000)).toMatchObject({
      waiting: expect.stringMatching(/no change/),
    });
    expect(settledLeader([restarted, early, seeing()], at("09.7"), 3_000)).toEqual({ leader: 1 });
    // A node flapping suspect and alive under load moves nothing: it does not hold the cluster up.
    const flapping = seeing(
      ["09.0", "N3:1 transitioned from Alive to Suspect"],
      ["09.2", "N3:1 transitioned from Suspect(since 0.2s ago) to Alive"],
    );
    expect(settledLeader([restarted, leading, flapping], at("10.0"), 3_000)).toEqual({ leader: 1 });
    // A node restarted after it saw the first one alive from its start: no transition to log.
    const later: NodeLogState = {
      running: true,
      restarted: true,
      startedAt: at("08.0"),
      events: events(
        ["08.3", "My Node ID is N3:2"],
        ["09.9", "N3:2 transitioned from Suspect(since 1.6s ago) to Alive"],
      ),
    };
    const seeingBoth = (...more: [string, string][]) =>
      seeing(["09.4", "N3:2 transitioned from Suspect(since 1s ago) to Alive"], ...more);
    const restartedSeeing = { ...restarted, events: [...restarted.events, ...seeingBoth().events.slice(1)] };
    expect(settledLeader([restartedSeeing, seeingBoth(["09.5", BECAME]), later], at("13.0"), 3_000)).toEqual({
      leader: 1,
    });
    // Seen alive, then dead again: not settled.
    const dead = seeing(["20.0", "N1:4 transitioned from Alive to Dead (gossip-age=11)"]);
    expect(settledLeader([restarted, leading, dead], at("30.0"), 3_000)).toEqual({
      waiting: "every node to see N1:4 alive",
    });
    // No leader: the last one stopped.
    expect(
      settledLeader([restarted, seeing(["06.0", BECAME], ["06.5", STOPPED]), seeing()], at("30.0"), 3_000),
    ).toEqual({
      waiting: "a partition leader",
    });
    expect(settledLeader([{ ...restarted, running: false }, leading, seeing()], at("30.0"), 3_000)).toEqual({
      waiting: "every node to run",
    });
  });

  it("with survivors, settles with a node down once its death and the moves after it are quiet", () => {
    const node = (running: boolean, ...more: [string, string][]): NodeLogState => ({
      running,
      restarted: false,
      startedAt: at("00.0"),
      events: events(...more),
    });
    const dead = { ...node(false, ["01.0", BECAME]), killedAt: at("10.0") };
    const survivors = { survivors: true };
    // Right after the death, the dead node's old claim is not a leader, and none has claimed since.
    expect(settledLeader([dead, node(true), node(true)], at("11.0"), 3_000, survivors)).toEqual({
      waiting: "a partition leader",
    });
    // A survivor took over at 12.5, then the replicas moved at 14.0: quiet only from 17.0 on.
    const leading = node(true, ["12.5", BECAME]);
    const moved = node(true, ["14.0", "Partition configuration transitions to new replicas"]);
    expect(settledLeader([dead, leading, moved], at("16.0"), 3_000, survivors)).toMatchObject({
      waiting: expect.stringContaining("no change for 3000 ms"),
    });
    expect(settledLeader([dead, leading, moved], at("17.5"), 3_000, survivors)).toEqual({ leader: 1 });
    // The death itself counts: a leader that claimed before the kill was noticed is not yet settled.
    const early = node(true, ["09.0", BECAME]);
    expect(settledLeader([dead, early, node(true)], at("12.0"), 3_000, survivors)).toMatchObject({
      waiting: expect.stringContaining("no change"),
    });
    // Without the option, a node down is never settled.
    expect(settledLeader([dead, leading, moved], at("30.0"), 3_000)).toEqual({
      waiting: "every node to run",
    });
  });
});
