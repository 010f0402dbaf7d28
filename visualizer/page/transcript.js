// The transcript: each message once, as it is appended, and the answer while it streams (updated in
// place, not redrawn). A long one draws its newest messages only, under "N earlier messages · show".
import { atEnd, h, setText } from "./dom.js";
import { textOf } from "./model.js";

const MAX_RESULT_CHARS = 1200;
/** Messages drawn when the transcript is drawn anew; "show" draws this many more each time. */
export const SHOWN_MESSAGES = 200;

export function createTranscript(host) {
  let rendered = 0;
  let shownFrom = null;
  let streaming = null;
  let shownMessages = SHOWN_MESSAGES;
  let lastView = null;

  function messageElement(message) {
    const div = h("div", { class: `msg ${message.role}` });
    const role = h("span", { class: "role" });
    div.appendChild(role);
    if (message.role === "user") {
      // Where it came from: prompt, steer, followUp (the agent's own notices are custom messages).
      role.textContent = message.source ? `user · ${message.source}` : "user";
      div.append(textOf(message.content));
    } else if (message.role === "assistant") {
      role.textContent = `assistant · ${message.stopReason ?? ""}`;
      for (const part of message.content ?? []) {
        if (part.type === "text") div.append(part.text);
        else if (part.type === "thinking")
          div.appendChild(
            h("div", { class: "thinking" }, part.redacted ? "[redacted thinking]" : part.thinking),
          );
        else if (part.type === "toolCall")
          div.appendChild(
            h(
              "span",
              { class: "call", title: part.id },
              `${part.name}(${JSON.stringify(part.arguments ?? {})})`,
            ),
          );
      }
      if (message.errorMessage)
        div.appendChild(h("div", { class: "meta" }, `error: ${message.errorMessage}`));
    } else if (message.role === "toolResult") {
      role.textContent = `tool result · ${message.toolName} · ${message.toolCallId}`;
      if (message.isError) div.classList.add("error");
      const text = textOf(message.content);
      div.append(text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}…` : text);
    } else if (message.role === "custom") {
      role.textContent = ["custom", message.customType, message.source].filter(Boolean).join(" · ");
      div.append(textOf(message.content) || JSON.stringify(message).slice(0, 500));
    } else {
      role.textContent = message.role ?? "message";
      div.append(textOf(message.content) || JSON.stringify(message).slice(0, 500));
    }
    return div;
  }

  function streamingElement() {
    const text = document.createTextNode("");
    const thinking = h("div", { class: "thinking" });
    const calls = document.createTextNode("");
    const div = h(
      "div",
      { class: "msg assistant streaming", "data-testid": "streaming" },
      h("span", { class: "role" }, "assistant · streaming"),
      thinking,
      text,
      calls,
      h("span", { class: "cursor" }),
    );
    return { div, text, thinking, calls };
  }

  /** Shows `view`'s transcript; `full` rebuilds it (another moment, another model). */
  function render(view, full) {
    const follow = atEnd(host);
    lastView = view;
    if (full || shownFrom !== view.messages || rendered > view.messages.length) {
      host.textContent = "";
      rendered = Math.max(0, view.messages.length - shownMessages);
      streaming = null;
      if (rendered > 0) host.appendChild(earlierButton(rendered));
    }
    shownFrom = view.messages;
    const fresh = [];
    for (; rendered < view.messages.length; rendered++) fresh.push(messageElement(view.messages[rendered]));
    if (fresh.length) {
      if (streaming) streaming.div.before(...fresh);
      else host.append(...fresh);
    }
    if (view.streaming) {
      streaming ??= streamingElement();
      if (!streaming.div.isConnected) host.appendChild(streaming.div);
      if (streaming.text.data !== view.streaming.text) streaming.text.data = view.streaming.text;
      setText(streaming.thinking, view.streaming.thinking);
      streaming.thinking.hidden = !view.streaming.thinking;
      const calls = view.streaming.calls ? `\n[${view.streaming.calls} tool call(s) streaming]` : "";
      if (streaming.calls.data !== calls) streaming.calls.data = calls;
    } else if (streaming) {
      streaming.div.remove();
      streaming = null;
    }
    if (follow) host.scrollTop = host.scrollHeight;
  }

  function earlierButton(hidden) {
    return h(
      "div",
      { class: "earlier-messages", "data-testid": "earlier-messages" },
      `${hidden} earlier message${hidden === 1 ? "" : "s"} · `,
      h(
        "button",
        {
          type: "button",
          class: "link",
          onclick: () => {
            shownMessages += SHOWN_MESSAGES;
            const top = host.scrollHeight - host.scrollTop;
            render(lastView, true);
            // Keep what the user was reading where it was.
            host.scrollTop = host.scrollHeight - top;
          },
        },
        `show ${Math.min(hidden, SHOWN_MESSAGES)} more`,
      ),
    );
  }

  return { render };
}
