// Building the page's elements. Every string from the server (user ids, display names, device
// ids, reasons) reaches the page only as a text node or an attribute value set here: nothing is
// ever parsed as HTML, so a display name like `<img src=x onerror=…>` shows as those characters.

/** The element with this id (the page's fixed skeleton in index.html). */
export function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`index.html has no #${id}`);
  return element;
}

/**
 * A new element. `props`: `class`, `text`, `on` (event name → listener), any other key an
 * attribute (a value of `true` sets it empty, `false`/`null`/`undefined` leaves it out).
 * Children: nodes, or strings (as text), or arrays of them; `null` is skipped.
 */
export function el(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") element.className = value;
    else if (key === "text") element.textContent = value;
    else if (key === "on") for (const [name, listener] of Object.entries(value)) element.addEventListener(name, listener);
    else if (key.startsWith("on")) throw new Error(`event handlers go in "on", not as attribute ${key}`);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces the element's children. */
export function fill(parent, ...children) {
  parent.replaceChildren();
  append(parent, children);
}

/** An SVG element (the chart): same props as `el`, in the SVG namespace. */
export function svg(tag, props = {}, ...children) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") element.setAttribute("class", value);
    else if (key === "text") element.textContent = value;
    else if (key.startsWith("on")) throw new Error(`event handlers go through addEventListener, not ${key}`);
    else element.setAttribute(key, String(value));
  }
  append(element, children);
  return element;
}

/**
 * Shows a one-line status in `element`: `kind` is "loading", "empty", "error" or "" (clears it).
 * The element is the view's live region, so screen readers hear it too.
 */
export function status(element, kind, text = "") {
  // Unchanged, it is left alone: a live region rewritten with the same words is read out again.
  if (element.textContent === text && element.dataset.kind === kind) return;
  element.textContent = text;
  element.dataset.kind = kind;
  element.hidden = text === "";
  element.setAttribute("role", kind === "error" ? "alert" : "status");
}

/** Shows or hides an error paragraph. */
export function showError(element, text) {
  element.textContent = text ?? "";
  element.hidden = !text;
}
