// The statechart panel: draws a machine graph (from graph.json, laid out by the server from the machine
// definition) fitted to the panel's width, lights its active states, and zooms (buttons, Ctrl/⌘ +
// wheel) and pans (drag, scroll bars). A panel too narrow to fit it with labels of FIT_FLOOR's size
// shows it at MIN_SCALE instead, and scrolls. Each edge shows one label (its first transition and how
// many more); hovering or clicking it shows them all.
import { setText, svg } from "./dom.js";
import { activeIds } from "./model.js";

/** Fitted to the width down to this scale (12 px labels at 9 px or more); narrower, MIN_SCALE and scroll. */
export const FIT_FLOOR = 0.75;
/** The scale of a chart too wide to fit: edge labels at 11.4 px. */
export const MIN_SCALE = 0.95;
const MAX_SCALE = 2.5;
const ZOOM_STEP = 1.2;

export function createChart({ viewport, caption }) {
  let graph = null;
  let scale = 1;
  /** "width": fit the width when labels stay readable, else MIN_SCALE; "whole": all of it; "manual": the user zoomed. */
  let mode = "width";
  let lastPan = 0;
  const nodes = new Map();
  let svgRoot = null;

  function fitScale() {
    if (!graph) return 1;
    const whole = Math.min(1.25, (viewport.clientWidth - 4) / graph.width);
    if (mode === "whole") return whole;
    if (mode === "width") return whole >= FIT_FLOOR ? whole : Math.max(MIN_SCALE, whole);
    return scale;
  }

  function applyScale(next, anchor) {
    if (!svgRoot || !graph) return;
    const before = scale;
    scale = Math.max(0.3, Math.min(MAX_SCALE, next));
    // Keep the point under the cursor (or the centre) where it was.
    const ax = anchor?.x ?? viewport.clientWidth / 2;
    const ay = anchor?.y ?? viewport.clientHeight / 2;
    const gx = (viewport.scrollLeft + ax) / before;
    const gy = (viewport.scrollTop + ay) / before;
    svgRoot.setAttribute("width", String(Math.round(graph.width * scale)));
    svgRoot.setAttribute("height", String(Math.round(graph.height * scale)));
    viewport.scrollLeft = gx * scale - ax;
    viewport.scrollTop = gy * scale - ay;
    viewport.dataset.scale = scale.toFixed(3);
  }

  function draw(next) {
    graph = next;
    nodes.clear();
    viewport.textContent = "";
    if (!graph) return;
    svgRoot = svg("svg", {
      viewBox: `0 0 ${graph.width} ${graph.height}`,
      role: "img",
      "aria-label": `${graph.id} statechart`,
      "data-graph": graph.id,
    });
    const defs = svg("defs");
    const marker = svg("marker", {
      id: `arrow-${graph.id}`,
      viewBox: "0 0 10 10",
      refX: 9,
      refY: 5,
      markerWidth: 7,
      markerHeight: 7,
      orient: "auto-start-reverse",
    });
    marker.appendChild(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-head" }));
    defs.appendChild(marker);
    svgRoot.appendChild(defs);
    const arrow = `url(#arrow-${graph.id})`;
    const lineHeight = graph.lineHeight ?? 14;

    const byId = new Map(graph.nodes.map((n) => [n.id, n]));
    const depth = (n) => (n.parent ? depth(byId.get(n.parent)) + 1 : 0);
    for (const node of [...graph.nodes].sort((a, b) => depth(a) - depth(b))) {
      const compound = graph.nodes.some((n) => n.parent === node.id);
      const g = svg("g", {
        class: `node ${compound ? "compound" : "leaf"} ${node.parent ? "" : "root"}`,
        "data-state": node.id,
      });
      g.appendChild(svg("title", {}, describe(node)));
      g.appendChild(
        svg("rect", { x: node.x, y: node.y, width: node.width, height: node.height, rx: compound ? 12 : 8 }),
      );
      if (compound && node.parent) {
        g.appendChild(
          svg(
            "text",
            { x: node.x + 12, y: node.y + 17, class: "title" },
            node.key + (node.invokes.length ? `  ⇢ ${node.invokes.join(", ")}` : ""),
          ),
        );
      } else if (!compound) {
        const hasSub = node.invokes.length > 0;
        g.appendChild(
          svg(
            "text",
            { x: node.x + node.width / 2, y: node.y + (hasSub ? 20 : 25), "text-anchor": "middle" },
            node.key,
          ),
        );
        if (hasSub)
          g.appendChild(
            svg(
              "text",
              { x: node.x + node.width / 2, y: node.y + 37, "text-anchor": "middle", class: "subtitle" },
              `⇢ ${node.invokes.join(", ")}`,
            ),
          );
      }
      if (node.parent)
        g.addEventListener("click", () => setText(caption, describe(node).replace(/\n/g, " · ")));
      svgRoot.appendChild(g);
      nodes.set(node.id, g);
      if (node.initial && byId.get(node.initial)) {
        const child = byId.get(node.initial);
        const cy = child.y + child.height / 2;
        svgRoot.appendChild(svg("circle", { cx: child.x - 16, cy, r: 4, class: "initial" }));
        svgRoot.appendChild(
          svg("path", {
            d: `M ${child.x - 12} ${cy} L ${child.x - 1} ${cy}`,
            class: "initial-arrow",
            "marker-end": arrow,
          }),
        );
      }
    }
    for (const edge of graph.edges) {
      const g = svg("g", { class: `edge ${edge.eventless ? "eventless" : ""}`, "data-edge": edge.id });
      const all = edgeDescription(edge);
      if (all) {
        g.appendChild(svg("title", {}, all));
        g.addEventListener("click", () => setText(caption, all.replace(/\n/g, " · ")));
      }
      // A wide transparent stroke under the line, so the edge is easy to hover and click.
      g.appendChild(svg("path", { d: edge.path, class: "hit" }));
      g.appendChild(svg("path", { d: edge.path, "marker-end": arrow }));
      edge.lines.forEach((line, index) => {
        g.appendChild(
          svg(
            "text",
            {
              x: edge.labelX,
              y: edge.labelY + (index - (edge.route === "below" ? 0 : edge.lines.length - 1)) * lineHeight,
              "text-anchor": edge.anchor,
              class: "label",
            },
            line,
          ),
        );
      });
      svgRoot.appendChild(g);
    }
    viewport.appendChild(svgRoot);
    applyScale(fitScale());
  }

  /** Lights the active states of `value`; `visited` maps state ids left lately to when. */
  function paint(value, visited = new Map(), now = 0) {
    if (!graph) return;
    const ids = new Set(activeIds(graph.id, value));
    const leaf = activeIds(graph.id, value).at(-1);
    for (const [id, g] of nodes) {
      const compound = g.classList.contains("compound");
      g.classList.toggle("active", id === leaf);
      g.classList.toggle("active-parent", ids.has(id) && id !== leaf && compound);
      const left = visited.get(id);
      g.classList.toggle("visited", id !== leaf && left !== undefined && now - left < 1500);
    }
    const active = leaf && nodes.get(leaf);
    if (active && Date.now() - lastPan > 5000) reveal(active);
  }

  /** Scrolls a state into view when it is outside, unless the user panned a moment ago. */
  function reveal(g) {
    const box = g.getBBox();
    const left = box.x * scale;
    const right = (box.x + box.width) * scale;
    const top = box.y * scale;
    const bottom = (box.y + box.height) * scale;
    const { scrollLeft, scrollTop, clientWidth, clientHeight } = viewport;
    if (left < scrollLeft || right > scrollLeft + clientWidth)
      viewport.scrollLeft = (left + right) / 2 - clientWidth / 2;
    if (top < scrollTop || bottom > scrollTop + clientHeight)
      viewport.scrollTop = (top + bottom) / 2 - clientHeight / 2;
  }

  // Zoom with Ctrl/⌘ + wheel (plain wheel scrolls, as everywhere); pan by dragging the background.
  viewport.addEventListener(
    "wheel",
    (event) => {
      if (!event.ctrlKey && !event.metaKey) return;
      event.preventDefault();
      const rect = viewport.getBoundingClientRect();
      mode = "manual";
      lastPan = Date.now();
      applyScale(scale * (event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP), {
        x: event.clientX - rect.left,
        y: event.clientY - rect.top,
      });
    },
    { passive: false },
  );
  let drag = null;
  // The pointer is captured only once it moves: captured at once, a click would go to the viewport
  // instead of the state or edge under it.
  viewport.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
  });
  viewport.addEventListener("pointermove", (event) => {
    if (!drag) return;
    if (!viewport.classList.contains("panning")) {
      if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < 4) return;
      viewport.setPointerCapture(event.pointerId);
      viewport.classList.add("panning");
    }
    lastPan = Date.now();
    viewport.scrollLeft = drag.left - (event.clientX - drag.x);
    viewport.scrollTop = drag.top - (event.clientY - drag.y);
  });
  const endDrag = () => {
    drag = null;
    viewport.classList.remove("panning");
  };
  viewport.addEventListener("pointerup", endDrag);
  viewport.addEventListener("pointercancel", endDrag);
  new ResizeObserver(() => {
    if (mode !== "manual") applyScale(fitScale());
  }).observe(viewport);

  return {
    draw,
    paint,
    get scale() {
      return scale;
    },
    zoomIn: () => ((mode = "manual"), applyScale(scale * ZOOM_STEP)),
    zoomOut: () => ((mode = "manual"), applyScale(scale / ZOOM_STEP)),
    /** The whole chart in view, however small: the overview; zoom in again to read. */
    fit: () => {
      mode = "whole";
      applyScale(fitScale());
      viewport.scrollLeft = 0;
    },
    actualSize: () => ((mode = "manual"), applyScale(1)),
  };
}

/** Every transition an edge stands for, one per line: what hovering or clicking it shows. */
function edgeDescription(edge) {
  const name = (id) => id.split(".").at(-1);
  if (edge.labels.length === 0) return "";
  return [`${name(edge.source)} → ${name(edge.target)}`, ...edge.labels].join("\n");
}

function describe(node) {
  return [
    node.id,
    node.invokes.length ? `invokes: ${node.invokes.join(", ")}` : "",
    node.entry.length ? `entry: ${node.entry.join(", ")}` : "",
    ...node.internal.map((i) => `on ${i}`),
  ]
    .filter(Boolean)
    .join("\n");
}
