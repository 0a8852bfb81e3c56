// Attempts over time as stacked bars (succeeded, failed, throttled), drawn from the counts
// endpoint's buckets. Dragging across the bars (or, from the keyboard, choosing bars with the
// arrow keys and Enter) picks a range of whole buckets, which the page makes its time filter.

import { svg } from "./dom.js";

/** Drawn at the container's own width, so the labels keep their size on a phone. */
const defaultWidth = 960;
const narrowestWidth = 280;
const height = 220;
const margin = { top: 14, right: 8, bottom: 28, left: 44 };
const series = ["succeeded", "failed", "throttled"];
/** A drag shorter than this (in chart units) is a click: it zooms into the one bucket under it. */
const clickTolerance = 3;

/**
 * Draws `counts` (the endpoint's answer) into `container`; `onZoom(since, until)` gets the ISO
 * range of the buckets picked. Answers the SVG element.
 */
export function drawChart(container, counts, onZoom) {
  const buckets = counts.buckets;
  const width = Math.max(narrowestWidth, Math.round(container.clientWidth || defaultWidth));
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const slot = plotWidth / buckets.length;
  const highest = Math.max(1, ...buckets.map((bucket) => bucket.succeeded + bucket.failed + bucket.throttled));
  const totals = Object.fromEntries(series.map((name) => [name, buckets.reduce((sum, bucket) => sum + bucket[name], 0)]));
  const first = buckets[0].start;
  const end = new Date(Date.parse(buckets[buckets.length - 1].start) + counts.bucket_ms).toISOString();

  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${height}`, class: "chart-svg", role: "img", tabindex: "0",
    "aria-label": `Attempts from ${first} to ${end}: ${totals.succeeded} succeeded, ${totals.failed} failed, ` +
      `${totals.throttled} throttled. Drag across the bars, or use the arrow keys and Enter, to zoom into a range.`,
  });
  chart.appendChild(svg("title", { text: `Attempts over time, ${describeBucket(counts.bucket_ms)} per bar` }));

  // Axes: the highest count, zero, and the range's first and last times.
  chart.appendChild(svg("line", { class: "axis", x1: margin.left, y1: margin.top + plotHeight, x2: width - margin.right, y2: margin.top + plotHeight }));
  chart.appendChild(svg("text", { class: "tick", x: margin.left - 6, y: margin.top + 8, "text-anchor": "end", text: String(highest) }));
  chart.appendChild(svg("text", { class: "tick", x: margin.left - 6, y: margin.top + plotHeight, "text-anchor": "end", text: "0" }));
  chart.appendChild(svg("text", { class: "tick", x: margin.left, y: height - 8, "text-anchor": "start", text: shortTime(first) }));
  chart.appendChild(svg("text", { class: "tick", x: width - margin.right, y: height - 8, "text-anchor": "end", text: shortTime(end) }));

  const bars = svg("g", { class: "bars" });
  buckets.forEach((bucket, index) => {
    const group = svg("g", { class: "bucket", "data-index": index });
    let y = margin.top + plotHeight;
    for (const name of series) {
      const barHeight = (bucket[name] / highest) * plotHeight;
      if (barHeight > 0) {
        y -= barHeight;
        group.appendChild(svg("rect", { class: `bar ${name}`, x: margin.left + index * slot + slot * 0.1, y, width: Math.max(1, slot * 0.8), height: barHeight }));
      }
    }
    group.appendChild(svg("title", {
      text: `${bucket.start}: ${bucket.succeeded} succeeded, ${bucket.failed} failed, ${bucket.throttled} throttled`,
    }));
    bars.appendChild(group);
  });
  chart.appendChild(bars);

  const selection = svg("rect", { class: "selection", x: 0, y: margin.top, width: 0, height: plotHeight, visibility: "hidden" });
  chart.appendChild(selection);
  // The surface that takes the drag, over the whole plot, so gaps between bars drag too.
  const surface = svg("rect", { class: "surface", x: margin.left, y: margin.top, width: plotWidth, height: plotHeight });
  chart.appendChild(surface);

  const bucketAt = (x) => Math.min(buckets.length - 1, Math.max(0, Math.floor((x - margin.left) / slot)));
  const show = (from, to) => {
    const low = Math.min(from, to);
    const high = Math.max(from, to);
    selection.setAttribute("x", String(margin.left + low * slot));
    selection.setAttribute("width", String((high - low + 1) * slot));
    selection.setAttribute("visibility", "visible");
  };
  const hide = () => selection.setAttribute("visibility", "hidden");
  const zoom = (from, to) => {
    const low = Math.min(from, to);
    const high = Math.max(from, to);
    const since = buckets[low].start;
    const until = new Date(Date.parse(buckets[high].start) + counts.bucket_ms).toISOString();
    onZoom(since, until);
  };

  // Pointer: a chart unit is a viewBox unit, whatever size the SVG is drawn at.
  const unitX = (event) => {
    const box = chart.getBoundingClientRect();
    return ((event.clientX - box.left) / box.width) * width;
  };
  let drag = null;
  surface.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    surface.setPointerCapture(event.pointerId);
    const x = unitX(event);
    drag = { x, from: bucketAt(x) };
    show(drag.from, drag.from);
    event.preventDefault();
  });
  surface.addEventListener("pointermove", (event) => {
    if (drag) show(drag.from, bucketAt(unitX(event)));
  });
  surface.addEventListener("pointerup", (event) => {
    if (!drag) return;
    const x = unitX(event);
    const to = Math.abs(x - drag.x) < clickTolerance ? drag.from : bucketAt(x);
    const from = drag.from;
    drag = null;
    zoom(from, to);
  });
  surface.addEventListener("pointercancel", () => { drag = null; hide(); });

  // Keyboard: arrows move the chosen bar, Shift+arrows widen the choice, Enter zooms, Escape drops it.
  let anchor = null;
  let focus = null;
  chart.addEventListener("keydown", (event) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, Home: -buckets.length, End: buckets.length }[event.key];
    if (step !== undefined) {
      focus = Math.min(buckets.length - 1, Math.max(0, (focus ?? (step > 0 ? -1 : buckets.length)) + step));
      if (!event.shiftKey || anchor === null) anchor = focus;
      show(anchor, focus);
      event.preventDefault();
    } else if (event.key === "Enter" && focus !== null) {
      zoom(anchor, focus);
      event.preventDefault();
    } else if (event.key === "Escape") {
      anchor = focus = null;
      hide();
    }
  });
  chart.addEventListener("blur", () => { if (!drag) { anchor = focus = null; hide(); } });

  container.replaceChildren(chart);
  return chart;
}

function shortTime(iso) {
  return iso.replace("T", " ").replace(/:\d{2}\.\d{3}Z$/, "Z");
}

function describeBucket(milliseconds) {
  const units = [[604_800_000, "week"], [86_400_000, "day"], [3_600_000, "hour"], [60_000, "minute"], [1_000, "second"]];
  for (const [size, name] of units) {
    if (milliseconds % size === 0) {
      const count = milliseconds / size;
      return count === 1 ? `one ${name}` : `${count} ${name}s`;
    }
  }
  return `${milliseconds} ms`;
}
