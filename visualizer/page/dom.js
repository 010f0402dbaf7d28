// Small DOM helpers shared by the page's modules. No inline styles anywhere: the server's
// Content-Security-Policy allows none (positions are set through element.style, which it allows).

export const $ = (id) => document.getElementById(id);

/** An HTML element with attributes (`class`, `data-*`, `title`…) and children (nodes or strings). */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes and optional text. */
export function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Sets a text only when it changed, so an unchanged page sees no DOM mutation at all. */
export function setText(node, text) {
  if (node && node.textContent !== text) node.textContent = text;
}

/** Sets an attribute only when it changed. */
export function setAttr(node, name, value) {
  if (value === undefined || value === null) {
    if (node.hasAttribute(name)) node.removeAttribute(name);
  } else if (node.getAttribute(name) !== String(value)) node.setAttribute(name, String(value));
}

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function json(value) {
  try {
    return JSON.stringify(value, null, 2) ?? "undefined";
  } catch {
    return String(value);
  }
}

/** Whether a scrollable box is scrolled to its end (then new content keeps it there). */
export const atEnd = (node) => node.scrollTop + node.clientHeight >= node.scrollHeight - 8;

let toastTimer = 0;
/** A message in the corner for a few seconds. */
export function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), 6000);
}
