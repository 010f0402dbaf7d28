// The chat example: an agent running in the page, shown with `agent-machine/react`. Each component
// selects the part of the agent's view it renders, so the approval cards and the steer box do not
// re-render while text streams. Beside the chat, the agent's statechart, drawn by the visualizer's
// own chart (visualizer/page/chart.js) and lit with the hook's `state`.
import { type FormEvent, StrictMode, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
// In your app: `from "agent-machine/browser"` and `from "agent-machine/react"`.
import { type AgentMessage, agentMachine, layoutMachineGraph } from "../../browser.js";
import {
  type AgentSource,
  createRemoteAgentStore,
  type ToolCallView,
  useAgent,
  useAgentActions,
} from "../../react.js";
// In your app: `from "agent-machine/chart"`, with `agent-machine/chart.css` for its styles.
import { createChart } from "../../visualizer/page/chart.js";
import { createDemoAgent } from "./demo-agent.js";

// `?remote`: the agent runs on the server (its session host at /api, on a real model when the
// server has a key), and the page follows the thread; else it runs here, in the page.
const params = new URLSearchParams(location.search);
const threadId = params.get("thread") ?? `chat-${Date.now().toString(36)}`;
const agent: AgentSource = params.has("remote")
  ? createRemoteAgentStore({ url: "/api", threadId })
  : createDemoAgent();
// For the browser test and the curious: the agent (or the remote thread's store), from the console.
(globalThis as { chatAgent?: AgentSource }).chatAgent = agent;

function App() {
  return (
    <div className="ex-layout">
      <main className="ex-chat">
        <Header />
        <Messages />
        <Streaming />
        <ToolCalls />
        <Approvals />
        <ErrorBanner />
        <Composer />
      </main>
      <Statechart />
    </div>
  );
}

function Header() {
  const state = useAgent(agent, (view) => view.state);
  return (
    <header className="ex-header">
      <strong>agent-machine</strong> chat example
      <span className="ex-muted" data-testid="mode">
        {params.has("remote") ? `thread ${threadId} on the server` : "agent in the page"}
      </span>
      <span className="ex-state" data-testid="state">
        {state}
      </span>
    </header>
  );
}

function textOf(content: string | { type: string; text?: string }[]): string {
  return typeof content === "string" ? content : content.map((part) => part.text ?? "").join("");
}

function Messages() {
  const messages = useAgent(agent, (view) => view.messages);
  return (
    <ol className="ex-messages" data-testid="messages">
      {messages.map((message) => (
        <MessageItem key={message.id} message={message} />
      ))}
    </ol>
  );
}

function MessageItem({ message }: { message: AgentMessage }) {
  switch (message.role) {
    case "user":
      return (
        <li
          className={`ex-message user ${message.source ?? ""}`}
          data-role="user"
          data-source={message.source}
        >
          {message.source === "steer" && <span className="ex-badge">steered</span>}
          {textOf(message.content)}
        </li>
      );
    case "assistant": {
      const text = message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
      const calls = message.content.filter((c) => c.type === "toolCall");
      return (
        <li className="ex-message assistant" data-role="assistant">
          {text}
          {calls.map((call) => (
            <code key={call.id} className="ex-call">
              {call.name}({JSON.stringify(call.arguments)})
            </code>
          ))}
          {message.errorMessage && <div className="ex-error">{message.errorMessage}</div>}
        </li>
      );
    }
    case "toolResult":
      return (
        <li className={`ex-message tool ${message.isError ? "failed" : ""}`} data-role="toolResult">
          <span className="ex-badge">{message.toolName}</span>
          {textOf(message.content)}
          {message.editedArgs !== undefined && (
            <span className="ex-edited">
              {" "}
              (ran with edited arguments {JSON.stringify(message.editedArgs)})
            </span>
          )}
        </li>
      );
    case "custom":
      return (
        <li className="ex-message notice" data-role="custom">
          {textOf(message.content)}
        </li>
      );
  }
}

function Streaming() {
  const streaming = useAgent(agent, (view) => view.streaming);
  if (!streaming) return null;
  return (
    <div className="ex-message assistant streaming" data-testid="streaming">
      {streaming.thinking && <div className="ex-thinking">{streaming.thinking}</div>}
      {streaming.text}
      {streaming.toolCalls.map((call) => (
        <code key={call.toolCallId} className="ex-call">
          {call.toolName}({call.argsText})
        </code>
      ))}
    </div>
  );
}

function ToolCalls() {
  const calls = useAgent(agent, (view) => view.toolCalls);
  const running = calls.filter((call) => call.phase === "running");
  if (running.length === 0) return null;
  return (
    <ul className="ex-tool-calls" data-testid="tool-calls">
      {running.map((call: ToolCallView) => (
        <li key={call.toolCallId} data-call={call.toolCallId}>
          <span className="ex-spinner" /> {call.toolName} {call.progress ?? "…"}
        </li>
      ))}
    </ul>
  );
}

function Approvals() {
  const approvals = useAgent(agent, (view) => view.pendingApprovals);
  return approvals.map((approval) => <ApprovalCard key={approval.toolCallId} {...approval} />);
}

function ApprovalCard({
  toolCallId,
  toolName,
  args,
}: {
  toolCallId: string;
  toolName: string;
  args: unknown;
}) {
  const { approve, deny } = useAgentActions(agent);
  const original = JSON.stringify(args, null, 2);
  const [edited, setEdited] = useState(original);
  const [problem, setProblem] = useState<string>();
  const onApprove = () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(edited);
    } catch {
      return setProblem("The arguments are not valid JSON");
    }
    // Refused edits (the tool's schema) reject: the call keeps waiting, the card says why.
    approve(toolCallId, edited === original ? undefined : { args: parsed }).catch((error: Error) =>
      setProblem(error.message),
    );
  };
  return (
    <section className="ex-approval" data-testid="approval" data-call={toolCallId}>
      <h3>
        Allow <code>{toolName}</code>?
      </h3>
      <textarea
        aria-label="Arguments"
        value={edited}
        rows={Math.max(2, edited.split("\n").length)}
        onChange={(event) => setEdited(event.target.value)}
      />
      {problem && <p className="ex-error">{problem}</p>}
      <div className="ex-row">
        <button type="button" className="primary" onClick={onApprove}>
          Approve
        </button>
        <button
          type="button"
          onClick={() => void deny(toolCallId, "The user denied it").catch(() => undefined)}
        >
          Deny
        </button>
      </div>
    </section>
  );
}

function ErrorBanner() {
  const error = useAgent(agent, (view) => view.error);
  return error ? (
    <p className="ex-error" role="alert">
      {error.message}
    </p>
  ) : null;
}

/** Prompts when idle, steers while a run goes on; Stop aborts it. */
function Composer() {
  const running = useAgent(agent, (view) => view.running);
  const queued = useAgent(agent, (view) => view.queued.steering.length);
  const { prompt, steer, abort } = useAgentActions(agent);
  const input = useRef<HTMLTextAreaElement>(null);
  const send = (event: FormEvent) => {
    event.preventDefault();
    const text = input.current!.value.trim();
    if (!text) return;
    input.current!.value = "";
    void (running ? steer(text) : prompt(text)).catch(() => undefined);
  };
  return (
    <form className="ex-composer" onSubmit={send}>
      <textarea
        ref={input}
        rows={2}
        data-testid="input"
        placeholder={running ? "Steer the agent while it works…" : "Ask the agent to deploy…"}
        onKeyDown={(event) => {
          if (event.key === "Enter" && !event.shiftKey) send(event);
        }}
      />
      <div className="ex-row">
        <button type="submit" className="primary" data-testid="send">
          {running ? "Steer" : "Send"}
        </button>
        <button
          type="button"
          className="danger"
          disabled={!running}
          onClick={() => void abort()}
          data-testid="stop"
        >
          Stop
        </button>
        {queued > 0 && <span className="ex-muted">{queued} steering message(s) queued</span>}
      </div>
    </form>
  );
}

/** `"running.compacting.reducing"` → `{ running: { compacting: "reducing" } }`, as the chart paints it. */
function stateValue(state: string): unknown {
  return state
    .split(".")
    .reduceRight<unknown>((inner, key) => (inner === undefined ? key : { [key]: inner }), undefined);
}

function Statechart() {
  const state = useAgent(agent, (view) => view.state);
  const viewport = useRef<HTMLDivElement>(null);
  const caption = useRef<HTMLDivElement>(null);
  const chart = useRef<ReturnType<typeof createChart>>(null);
  const visited = useRef(new Map<string, number>());
  const previous = useRef<string>(undefined);
  useEffect(() => {
    if (chart.current) return; // StrictMode runs effects twice: one chart
    chart.current = createChart({ viewport: viewport.current!, caption: caption.current! });
    chart.current.draw(layoutMachineGraph(agentMachine));
  }, []);
  useEffect(() => {
    // The states just left stay tinted a moment, as in the visualizer.
    if (previous.current !== undefined) visited.current.set(`agent.${previous.current}`, Date.now());
    previous.current = state;
    chart.current?.paint(stateValue(state), visited.current, Date.now());
  }, [state]);
  return (
    <aside className="panel ex-chart-panel">
      <h2>Statechart</h2>
      <div ref={viewport} className="chart" data-testid="chart" />
      <div ref={caption} className="caption muted">
        Filled: the active state. Click a state or an edge for what it does.
      </div>
    </aside>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
