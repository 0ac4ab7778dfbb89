// The page of `torchsweep report`: reads the data inlined by the report
// command, writes the sections and draws every chart with Vega (inlined
// too). When every chart has rendered, <body> gets data-rendered="true" and
// data-charts (their number), which the browser tests wait for; a failure
// sets data-render-error and is logged to the console.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const root = document.getElementById("report");
  root.textContent = "";
  const views = [];

  // ---- small DOM helpers -------------------------------------------------
  function element(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null) continue;
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.append(child);
    return node;
  }
  function section(title, id) {
    const node = element("section", { id: id });
    node.append(element("h2", { text: title }));
    root.append(node);
    return node;
  }
  function note(parent, text) {
    parent.append(element("p", { className: "note", text: text }));
  }
  function number(value, digits) {
    if (value === null || value === undefined) return "-";
    if (typeof value !== "number") return String(value);
    if (Math.abs(value) >= 1e4) return value.toFixed(0);
    // Also a table's formatter, called with (value, row): digits only when a number.
    const precision = typeof digits === "number" ? digits : 4;
    const text = value.toPrecision(precision);
    return text.includes("e") || !text.includes(".") ? text : text.replace(/\.?0+$/, "");
  }
  function percent(value) {
    if (value === null || value === undefined) return "-";
    return (value >= 0 ? "+" : "") + (100 * value).toFixed(1) + "%";
  }
  function interval(estimate, low, high, suffix) {
    if (estimate === null || estimate === undefined) return "-";
    const text = number(estimate, 3) + (suffix || "");
    if (low === null || low === undefined) return text + " [n too small]";
    return text + " [" + number(low, 3) + ", " + number(high, 3) + "]";
  }

  // A table whose columns sort on a click (numbers as numbers); `columns`
  // are [key, heading, format?]; `rowAttributes(row)` adds data-* to a row.
  function sortableTable(parent, columns, rows, rowAttributes) {
    const table = element("table");
    const head = element("tr");
    const body = element("tbody");
    columns.forEach(function (column, index) {
      const button = element("button", { type: "button", text: column[1] });
      const th = element("th", { scope: "col", "aria-sort": "none" }, [button]);
      button.addEventListener("click", function () {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        head.querySelectorAll("th").forEach(function (other) { other.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const sorted = Array.from(body.rows).sort(function (a, b) {
          const x = a.cells[index].dataset.value, y = b.cells[index].dataset.value;
          const nx = parseFloat(x), ny = parseFloat(y);
          const order = !isNaN(nx) && !isNaN(ny) ? nx - ny : String(x).localeCompare(String(y));
          return ascending ? order : -order;
        });
        sorted.forEach(function (row) { body.append(row); });
      });
      head.append(th);
    });
    for (const row of rows) {
      const tr = element("tr", rowAttributes ? rowAttributes(row) : {});
      for (const column of columns) {
        const value = row[column[0]];
        const shown = column[2] ? column[2](value, row) : value === null || value === undefined ? "-" : String(value);
        const td = element("td", { className: typeof value === "number" ? "number" : undefined });
        td.dataset.value = value === null || value === undefined ? "" : String(value);
        if (shown instanceof Node) td.append(shown);
        else td.textContent = shown;
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(element("thead", {}, [head]), body);
    parent.append(element("div", { className: "scroll" }, [table]));
    return table;
  }

  // ---- charts --------------------------------------------------------------
  function chartWidth(parent) {
    return Math.max(240, Math.min((parent.clientWidth || 760) - 24, 760));
  }
  function chart(parent, name, caption, spec, attributes) {
    const figure = element("figure", Object.assign({ className: "chart", "data-chart": name }, attributes || {}));
    const holder = element("div");
    figure.append(holder);
    if (caption) figure.append(element("figcaption", { text: caption }));
    parent.append(figure);
    const view = new vega.View(vega.parse(spec), { renderer: "svg", container: holder, hover: true });
    views.push(view.runAsync());
    return figure;
  }

  // Estimates with 95% whiskers, one row each, a reference line at `reference`,
  // the figures written beside each point (no colour needed to read it).
  function intervalChart(parent, name, caption, rows, reference, axisTitle) {
    const width = chartWidth(parent);
    const values = rows.map(function (row, i) {
      return {
        row: String(i).padStart(4, "0") + " " + row.label,
        label: row.label, group: row.group, estimate: row.estimate,
        low: row.low === null ? row.estimate : row.low, high: row.high === null ? row.estimate : row.high,
        text: row.text || interval(row.estimate, row.low, row.high, row.suffix || "")
      };
    });
    const labelWidth = Math.min(260, Math.round(width * 0.35));
    return chart(parent, name, caption, {
      $schema: "https://vega.github.io/schema/vega/v5.json",
      width: width - labelWidth - 24, height: Math.max(40, 22 * values.length), padding: 4,
      data: [{ name: "rows", values: values }],
      scales: [
        { name: "y", type: "band", domain: { data: "rows", field: "row" }, range: "height", padding: 0.3 },
        { name: "x", type: "linear", zero: false, nice: true, range: "width",
          domain: { fields: [{ data: "rows", field: "low" }, { data: "rows", field: "high" }, { signal: "[" + reference + "]" }] } },
        { name: "shape", type: "ordinal", domain: { data: "rows", field: "group" },
          range: ["circle", "square", "triangle-up", "diamond", "cross", "triangle-down"] },
        { name: "color", type: "ordinal", domain: { data: "rows", field: "group" }, range: "category" }
      ],
      axes: [
        { orient: "bottom", scale: "x", title: axisTitle, grid: true, tickCount: Math.max(2, Math.floor((width - labelWidth - 24) / 70)) },
        { orient: "left", scale: "y", labelLimit: labelWidth, encode: { labels: { update: { text: { signal: "slice(datum.value, 5)" } } } } }
      ],
      legends: values.some(function (v) { return v.group !== values[0].group; })
        ? [{ shape: "shape", fill: "color", orient: "bottom", title: "comparison" }] : [],
      marks: [
        { type: "rule", encode: { update: { x: { scale: "x", value: reference }, y: { value: 0 }, y2: { signal: "height" },
          stroke: { value: "#555" }, strokeDash: { value: [4, 3] } } } },
        { type: "rule", from: { data: "rows" }, encode: { update: {
          x: { scale: "x", field: "low" }, x2: { scale: "x", field: "high" },
          y: { scale: "y", field: "row", band: 0.5 }, stroke: { value: "#333" }, strokeWidth: { value: 1.5 } } } },
        { type: "symbol", from: { data: "rows" }, encode: { update: {
          x: { scale: "x", field: "estimate" }, y: { scale: "y", field: "row", band: 0.5 },
          shape: { scale: "shape", field: "group" }, fill: { scale: "color", field: "group" }, stroke: { value: "#000" },
          size: { value: 70 }, tooltip: { signal: "datum.label + ': ' + datum.text" } } } },
        { type: "text", from: { data: "rows" }, encode: { update: {
          x: { scale: "x", field: "high", offset: 6 }, y: { scale: "y", field: "row", band: 0.5 },
          baseline: { value: "middle" }, fontSize: { value: 10 }, text: { field: "text" } } } }
      ]
    });
  }

  // The compiler dashboard's chart: each configuration's compiled compile time against its speedup,
  // a line at no speedup; a configuration with runs failing the accuracy gate drawn as a cross.
  function compileChart(parent, points) {
    const width = chartWidth(parent);
    const values = points.map(function (p) {
      return { label: p.configuration, compile_s: p.compile_s, speedup: p.speedup,
               accuracy: p.inaccurate > 0 ? "inaccurate" : "accurate" };
    });
    return chart(parent, "compile", "Compile time (capture and first iteration) against speedup, one point per " +
      "configuration; crosses failed the accuracy gate.", {
      $schema: "https://vega.github.io/schema/vega/v5.json",
      width: width - 80, height: 220, padding: 4,
      data: [{ name: "points", values: values }],
      scales: [
        { name: "x", type: "linear", zero: true, nice: true, range: "width", domain: { data: "points", field: "compile_s" } },
        { name: "y", type: "linear", zero: false, nice: true, range: "height",
          domain: { fields: [{ data: "points", field: "speedup" }, { signal: "[1]" }] } },
        { name: "shape", type: "ordinal", domain: ["accurate", "inaccurate"], range: ["circle", "cross"] },
        { name: "color", type: "ordinal", domain: ["accurate", "inaccurate"], range: ["#1f77b4", "#d62728"] }
      ],
      axes: [
        { orient: "bottom", scale: "x", title: "compile time (s)", grid: true },
        { orient: "left", scale: "y", title: "speedup (×)", grid: true }
      ],
      legends: [{ shape: "shape", fill: "color", orient: "bottom", title: "accuracy gate" }],
      marks: [
        { type: "rule", encode: { update: { y: { scale: "y", value: 1 }, x: { value: 0 }, x2: { signal: "width" },
          stroke: { value: "#555" }, strokeDash: { value: [4, 3] } } } },
        { type: "symbol", from: { data: "points" }, encode: { update: {
          x: { scale: "x", field: "compile_s" }, y: { scale: "y", field: "speedup" },
          shape: { scale: "shape", field: "accuracy" }, fill: { scale: "color", field: "accuracy" },
          stroke: { value: "#000" }, size: { value: 70 },
          tooltip: { signal: "datum.label + ': ' + format(datum.speedup, '.3f') + '× after ' + format(datum.compile_s, '.2f') + ' s'" } } } }
      ]
    });
  }

  function throughputChart(parent, model, rows) {
    const width = chartWidth(parent);
    const labelRoom = Math.min(190, Math.round(width * 0.35));
    // A language model's throughput in tokens (docs/language-models.md), any other's in samples.
    const tokens = rows.every(function (r) { return r.tokens_per_s !== null && r.tokens_per_s !== undefined; });
    const field = tokens ? "tokens_per_s" : "samples_per_s", unit = tokens ? "tokens/s" : "samples/s";
    return chart(parent, "throughput", unit + " against batch size, " + model + "; each line is labelled with its series.", {
      $schema: "https://vega.github.io/schema/vega/v5.json",
      width: width - 60 - labelRoom, height: 200, padding: { left: 4, top: 8, bottom: 4, right: labelRoom },
      data: [{ name: "points", values: rows, transform: [
        { type: "window", sort: { field: "batch_size", order: "descending" }, groupby: ["series"], ops: ["row_number"], as: ["rank"] }] }],
      scales: [
        { name: "x", type: "point", domain: { data: "points", field: "batch_size", sort: true }, range: "width", padding: 0.3 },
        // Headroom above the highest point, so its name fits inside the chart.
        { name: "y", type: "linear", nice: true, domain: [0, 1.12 * Math.max.apply(null, rows.map(function (r) { return r[field]; }))], range: "height" },
        { name: "color", type: "ordinal", domain: { data: "points", field: "series" }, range: "category" },
        { name: "dash", type: "ordinal", domain: { data: "points", field: "series" }, range: [[1, 0], [6, 3], [2, 2], [8, 3, 2, 3]] },
        { name: "shape", type: "ordinal", domain: { data: "points", field: "series" }, range: ["circle", "square", "triangle-up", "diamond", "cross"] }
      ],
      axes: [{ orient: "bottom", scale: "x", title: "batch size" }, { orient: "left", scale: "y", title: unit, grid: true }],
      marks: [
        { type: "group", from: { facet: { name: "series_points", data: "points", groupby: "series" } },
          marks: [{ type: "line", from: { data: "series_points" }, sort: { field: "datum.batch_size" }, encode: { update: {
            x: { scale: "x", field: "batch_size" }, y: { scale: "y", field: field },
            stroke: { scale: "color", field: "series" }, strokeDash: { scale: "dash", field: "series" }, strokeWidth: { value: 2 } } } }] },
        { type: "symbol", name: "dots", from: { data: "points" }, encode: { update: {
          x: { scale: "x", field: "batch_size" }, y: { scale: "y", field: field },
          shape: { scale: "shape", field: "series" }, fill: { scale: "color", field: "series" }, stroke: { value: "#000" },
          tooltip: { signal: "datum.series + ', batch ' + datum.batch_size + ': ' + format(datum." + field + ", '.4~s') + ' " + unit + "'" } } } },
        // Each series named at its largest batch; Vega's label transform moves
        // names that would overlap (two series of nearly equal throughput).
        { type: "text", from: { data: "dots" }, encode: { update: {
            fontSize: { value: 10 }, text: { signal: "datum.datum.rank === 1 ? datum.datum.series : ''" } } },
          transform: [{ type: "label", size: { signal: "[width + " + labelRoom + ", height + 8]" }, offset: [6],
            anchor: ["right", "top-right", "bottom-right", "top", "bottom", "left", "top-left", "bottom-left"], avoidMarks: ["dots"] }] }
      ]
    }, { "data-model": model, "data-unit": unit });
  }

  function memoryChart(parent, rows) {
    const width = chartWidth(parent);
    const values = [];
    rows.forEach(function (row, i) {
      const key = String(i).padStart(4, "0") + " " + row.configuration;
      values.push({ row: key, mode: "eager", mib: row.eager_mib });
      values.push({ row: key, mode: "compiled", mib: row.compiled_mib });
    });
    const labelWidth = Math.min(240, Math.round(width * 0.4));
    return chart(parent, "memory", "Peak memory of the timed phase, eager against compiled (MiB); each bar says which it is.", {
      $schema: "https://vega.github.io/schema/vega/v5.json",
      width: width - labelWidth - 24, height: Math.max(50, 44 * rows.length), padding: 4,
      data: [{ name: "bars", values: values }],
      scales: [
        { name: "y", type: "band", domain: { data: "bars", field: "row" }, range: "height", padding: 0.25 },
        { name: "x", type: "linear", zero: true, nice: true, domain: { data: "bars", field: "mib" }, range: "width" },
        { name: "fill", type: "ordinal", domain: ["eager", "compiled"], range: ["#9ab8e0", "#e0a86a"] }
      ],
      axes: [{ orient: "bottom", scale: "x", title: "MiB", grid: true, tickCount: Math.max(2, Math.floor((width - labelWidth - 24) / 70)) },
             { orient: "left", scale: "y", labelLimit: labelWidth, encode: { labels: { update: { text: { signal: "slice(datum.value, 5)" } } } } }],
      marks: [{ type: "group", from: { facet: { name: "pair", data: "bars", groupby: "row" } },
        encode: { update: { y: { scale: "y", field: "row" }, height: { scale: "y", band: 1 } } },
        signals: [{ name: "inner", update: "bandwidth('y')" }],
        scales: [{ name: "mode", type: "band", domain: ["eager", "compiled"], range: [0, { signal: "inner" }], padding: 0.1 }],
        marks: [
          { type: "rect", from: { data: "pair" }, encode: { update: {
            y: { scale: "mode", field: "mode" }, height: { scale: "mode", band: 1 }, x: { scale: "x", value: 0 }, x2: { scale: "x", field: "mib" },
            fill: { scale: "fill", field: "mode" }, stroke: { value: "#333" },
            strokeDash: { signal: "datum.mode === 'compiled' ? [4, 2] : [1, 0]" } } } },
          { type: "text", from: { data: "pair" }, encode: { update: {
            y: { scale: "mode", field: "mode", band: 0.5 }, x: { scale: "x", field: "mib", offset: 4 }, baseline: { value: "middle" },
            fontSize: { value: 10 }, text: { signal: "datum.mode + ' ' + format(datum.mib, '.4~r') + ' MiB'" } } } }
        ] }]
    });
  }

  function trendChart(parent, trend) {
    const width = chartWidth(parent);
    const marks = trend.change_points.map(function (step) {
      return { index: step.index, text: "step " + percent(step.change) + " (" + step.direction + ")" };
    });
    const baseline = trend.baseline_index === undefined ? [] : [{ index: trend.baseline_index, text: "baseline" }];
    return chart(parent, "trend", null, {
      $schema: "https://vega.github.io/schema/vega/v5.json",
      width: width - 70, height: 150, padding: 4,
      data: [{ name: "points", values: trend.points }, { name: "steps", values: marks }, { name: "baseline", values: baseline },
             { name: "band", values: trend.noise_band ? [trend.noise_band] : [] }],
      scales: [
        { name: "x", type: "linear", zero: false, nice: false, range: "width",
          domain: { data: "points", field: "index" } },
        { name: "y", type: "linear", zero: false, nice: true, range: "height",
          domain: { fields: [{ data: "points", field: "epoch_time_s" }, { data: "band", field: "low" }, { data: "band", field: "high" }] } }
      ],
      axes: [{ orient: "bottom", scale: "x", title: "sweep of the tag (oldest first)", tickMinStep: 1, format: "d", tickCount: Math.max(2, Math.floor((width - 70) / 50)) },
             { orient: "left", scale: "y", title: "epoch s", grid: true }],
      marks: [
        // The noise band: where 95% of the nights' medians fall when nothing changed (docs/noise.md).
        { type: "rect", from: { data: "band" }, encode: { update: {
          x: { value: 0 }, x2: { signal: "width" }, y: { scale: "y", field: "low" }, y2: { scale: "y", field: "high" },
          fill: { value: "#3a5f9a" }, fillOpacity: { value: 0.12 },
          tooltip: { signal: "'noise band: ' + format(datum.low, '.4~r') + ' to ' + format(datum.high, '.4~r') + ' s'" } } } },
        { type: "line", from: { data: "points" }, encode: { update: {
          x: { scale: "x", field: "index" }, y: { scale: "y", field: "epoch_time_s" }, stroke: { value: "#3a5f9a" }, strokeWidth: { value: 1.5 } } } },
        { type: "symbol", from: { data: "points" }, encode: { update: {
          x: { scale: "x", field: "index" }, y: { scale: "y", field: "epoch_time_s" }, size: { value: 24 }, fill: { value: "#3a5f9a" },
          tooltip: { signal: "datum.name + ' ' + datum.created_at + ': ' + format(datum.epoch_time_s, '.4~r') + ' s (' + datum.runs + ' runs)'" } } } },
        { type: "rule", from: { data: "steps" }, encode: { update: {
          x: { scale: "x", signal: "datum.index - 0.5" }, y: { value: 0 }, y2: { signal: "height" },
          stroke: { value: "#b3261e" }, strokeWidth: { value: 2 }, strokeDash: { value: [6, 3] } } } },
        { type: "text", from: { data: "steps" }, encode: { update: {
          // Right of the line, or left of it in the chart's right half, so it never leaves the chart.
          x: { scale: "x", signal: "datum.index - 0.5", offset: { signal: "datum.index > (domain('x')[0] + domain('x')[1]) / 2 ? -3 : 3" } },
          align: { signal: "datum.index > (domain('x')[0] + domain('x')[1]) / 2 ? 'right' : 'left'" },
          y: { value: 10 }, fontSize: { value: 10 }, fontWeight: { value: "bold" },
          fill: { value: "#b3261e" }, text: { field: "text" } } } },
        { type: "rule", from: { data: "baseline" }, encode: { update: {
          x: { scale: "x", field: "index" }, y: { value: 0 }, y2: { signal: "height" }, stroke: { value: "#333" }, strokeDash: { value: [2, 2] } } } },
        { type: "text", from: { data: "baseline" }, encode: { update: {
          x: { scale: "x", field: "index", offset: 3 }, y: { signal: "height - 4" }, fontSize: { value: 10 }, text: { field: "text" } } } }
      ]
    }, { "data-configuration": trend.configuration, "data-change-points": String(trend.change_points.length),
         "data-noise-band": trend.noise_band ? number(trend.noise_band.night_spread, 3) : "" });
  }

  // ---- the sections --------------------------------------------------------
  root.append(element("h1", { text: data.title }));
  const sweepNames = (data.sweeps || []).map(function (s) { return s.name + " (" + s.sweep_id + ", " + s.created_at + ")"; });
  root.append(element("p", { className: "meta", text: "Sweep" + (sweepNames.length === 1 ? " " : "s ") + (sweepNames.join("; ") || "none") +
    " · store " + (data.store || "?") + " · made " + data.generated_at + " by torchsweep " + data.torchsweep_version +
    (data.baseline ? " · baseline " + data.baseline : "") }));

  const summary = section("Summary", "summary");
  const entries = [["configurations", "configurations"], ["runs", "runs"], ["failures", "failed jobs"],
    ["flagged", "runs flagged noisy or short warm-up"], ["inaccurate", "compiled runs failing the accuracy gate"],
    ["busy", "runs taken while the node was busy"], ["regressions", "regressions"], ["improvements", "improvements"],
    ["confirmed", "confirmed regressions"], ["unconfirmed", "unconfirmed regressions"],
    ["flagged_regressions", "regressions awaiting confirmation"], ["suspicious", "suspicious (too few runs)"],
    ["compile_time_regressions", "compile-time regressions"], ["cost", "cost of the priced runs"]];
  const list = element("dl", { className: "summary" });
  for (const [key, label] of entries) {
    if (data.summary[key] === undefined) continue;
    const value = data.summary[key];  // counts, and the cost: a number to round
    list.append(element("div", { "data-summary": key }, [element("dt", { text: label }),
      element("dd", { text: Number.isInteger(value) ? String(value) : number(value) })]));
  }
  summary.append(list);
  for (const text of data.notes) note(summary, text);

  // A regressions table (readers/regressions.hpp) of one judged metric.
  function regressionTable(into, table) {
    const rows = table.rows.filter(function (row) { return row.runs > 0 || row.baseline_runs > 0; });
    const columns = table.columns.slice(0, table.columns.indexOf("runs"))
      .filter(function (c) { return c !== "task" && c !== "device_name"; })
      .map(function (c) { return [c, c]; });
    sortableTable(into, columns.concat([
      ["runs", "runs"], ["baseline_runs", "baseline runs"], ["change", "change", percent],
      ["p_value", "p", function (v) { return number(v, 2); }],
      ["verdict", "verdict", function (v) { return element("span", { className: "verdict-" + v, text: v === "regressed" ? "▲ regressed" : v === "improved" ? "▼ improved" : String(v) }); }],
      ["threshold", "threshold", percent],
      ["power_10pct", "power at 10%", function (v) { return v === null || v === undefined ? "-" : number(v, 2); }],
      ["rerun_change", "rerun change", percent], ["rerun_verdict", "rerun verdict"],
      ["classification", "classification", function (v) { return v ? element("span", { className: "classification-" + v, text: v }) : "-"; }]
    ]), rows, function (row) { return { "data-verdict": row.verdict, "data-classification": row.classification || "" }; });
  }

  if (data.regressions) {
    const regressions = section("Regressions against the baseline", "regressions");
    note(regressions, "Rule: two-sided Mann–Whitney p below alpha and the median epoch time worse than the threshold. " +
      "confirmed: the confirmation reruns (torchsweep confirm) are flagged too; unconfirmed: they are not; " +
      "flagged: not rerun yet; suspicious: worse, but too few runs for the test to fire. " +
      "threshold: the user's, or what a calibrated configuration's noise needs if more; power at 10%: how often the rule " +
      "at that threshold and these runs sees a 10% slowdown (calibrated configurations, docs/noise.md).");
    regressionTable(regressions, data.regressions);
  }
  if (data.compile_regressions) {
    const compileRegressions = section("Compile-time regressions against the baseline", "compile-regressions");
    note(compileRegressions, "The same rule on the compiled runs' compile time (capture and first iteration): " +
      "a night whose compile time grew past the threshold regressed, however fast it then ran.");
    regressionTable(compileRegressions, data.compile_regressions);
  }

  const speedups = section("Speedups", "speedups");
  if (data.speedups && data.speedups.length) {
    note(speedups, "speedup = reference epoch time / other epoch time (above 1: the other is faster), with 95% bootstrap intervals; " +
      "below 5 runs a side no interval is drawn.");
    // The comparison joins the row's name only when there is more than one kind.
    const kinds = new Set(data.speedups.map(function (s) { return s.comparison; }));
    const rows = data.speedups.map(function (s) {
      // A model that computes something else compiled has no speedup to speak of (docs/compiler.md).
      return { label: s.configuration + (kinds.size > 1 ? " · " + s.comparison : "") + (s.inaccurate ? " · inaccurate" : ""),
               group: s.comparison,
               estimate: s.speedup, low: s.low, high: s.high, suffix: "×" };
    });
    intervalChart(speedups, "speedup", "Speedups per configuration with their 95% intervals.", rows, 1, "speedup (×)");
    sortableTable(speedups, [["configuration", "configuration"], ["comparison", "comparison"],
      ["speedup", "speedup", function (v, row) { return interval(v, row.low, row.high, "×"); }],
      ["reference_runs", "runs (reference)"], ["other_runs", "runs (other)"],
      ["memory_reduction", "memory reduction", percent], ["inaccurate", "inaccurate runs"]], data.speedups);
  } else {
    note(speedups, "No configuration ran both sides of a comparison (eager and compiled, or two runners).");
  }

  if (data.suite && data.suite.length) {
    const suite = section("Compiled against eager, as a suite", "suite");
    note(suite, "Per runner and environment, as PyTorch's compiler dashboard sums up a suite: the configurations " +
      "that ran (failed ones included), how many passed (a speedup from successful runs of both modes) and the " +
      "geometric mean of their compiled speedups (torchsweep query --compare mode --summary).");
    sortableTable(suite, [["runner", "runner"], ["env", "environment"], ["configurations", "configurations"],
      ["passed", "passed"], ["inaccurate", "inaccurate"], ["geomean_speedup", "geomean speedup", function (v) { return v === null ? "-" : number(v, 3) + "×"; }]],
      data.suite);
  }

  const compiler = data.compiler || {};
  if ((compiler.points || []).length || (compiler.accuracy || []).length || (compiler.break_reasons || []).length) {
    const compilerSection = section("What the compiler did", "compiler");
    note(compilerSection, "docs/compiler.md: every compiled step is held to eager from the same weights and batch; " +
      "graph breaks and compile time come from PyTorch's own counters.");
    if (compiler.points.length) {
      compileChart(compilerSection, compiler.points);
      note(compilerSection, "A point far right and low pays its compile time back slowly: the compile time divided by the " +
        "time a step saves is the steps it takes to break even.");
    }
    if (compiler.accuracy.length) {
      compilerSection.append(element("h3", { text: "Accuracy gate, compiled runs per runner and mode" }));
      sortableTable(compilerSection, [["runner", "runner"], ["mode", "compile mode"], ["passed", "passed"], ["failed", "failed"],
        ["skipped", "skipped"]],
        compiler.accuracy);
    }
    if (compiler.break_reasons.length) {
      compilerSection.append(element("h3", { text: "Graph breaks by reason" }));
      sortableTable(compilerSection, [["reason", "reason"], ["breaks", "breaks"], ["runs", "runs"], ["models", "models"]],
        compiler.break_reasons);
    }
    if (compiler.cache.length) {
      compilerSection.append(element("h3", { text: "Compile time, cold and warm caches" }));
      sortableTable(compilerSection, [["configuration", "configuration"], ["cold_s", "cold s", number], ["warm_s", "warm s", number],
        ["cold_break_even_iters", "break-even cold"], ["warm_break_even_iters", "break-even warm"]],
        compiler.cache);
    }
    if (compiler.points.length) {
      compilerSection.append(element("h3", { text: "Break-even: iterations until the compile pays for itself" }));
      note(compilerSection, "The compiled runs' compile time (capture and first iteration) over the time each step saves " +
        "against eager, rounded up; never: the compiled step is not faster (docs/compiler.md).");
      sortableTable(compilerSection, [["configuration", "configuration"], ["compile_s", "compile s", number],
        ["speedup", "speedup", function (v) { return number(v, 3) + "×"; }], ["break_even_iters", "break-even iterations"]],
        compiler.points);
    }
  }

  // Why (docs/explain.md): torchsweep explain of each pair and regression whose runs carry profiles.
  const why = data.why || { entries: [], without_profiles: 0 };
  if (why.entries.length || why.without_profiles) {
    const whySection = section("Why", "why");
    note(whySection, "torchsweep explain of each compiled-vs-eager pair and each flagged or confirmed regression " +
      "whose runs carry profiles (the job field profile): the operators whose time a step differs most, with " +
      "their share of the measured difference, and what the profile leaves unexplained (docs/explain.md).");
    const ms = function (seconds) { return seconds === null || seconds === undefined ? "-" : (1e3 * seconds).toFixed(3); };
    const signedMs = function (seconds) { return (seconds >= 0 ? "+" : "") + (1e3 * seconds).toFixed(3) + " ms"; };
    const pairedRows = function (into, rows, what) {
      sortableTable(into, [["name", what], ["change", "change"], ["a", "A ms", ms], ["b", "B ms", ms],
        ["difference_s", "difference ms", ms], ["share", "share", percent]],
        rows.map(function (row) {
          return { name: row.name, change: row.change, a: row.seconds[0], b: row.seconds[1],
                   difference_s: row.difference_s, share: row.share };
        }),
        function (row) { return { "data-name": row.name, "data-change": row.change }; });
    };
    why.entries.forEach(function (entry) {
      const block = element("article", { className: "why", "data-kind": entry.kind, "data-title": entry.title });
      block.append(element("h3", { text: entry.kind + ": " + entry.title }));
      const timed = entry.timed;
      note(block, "A " + entry.sides[0].spec + ", B " + entry.sides[1].spec + ": a timed step " + ms(timed.step_s[0]) +
        " ms against " + ms(timed.step_s[1]) + " ms, B " + signedMs(timed.difference_s) + " [" +
        signedMs(timed.interval[0]) + ", " + signedMs(timed.interval[1]) + "]" +
        (timed.interval[0] > 0 || timed.interval[1] < 0 ? "" : ": not measurably different, so no shares"));
      pairedRows(block, entry.operators, entry.time === "self_device_s" ? "operator (device time)" : "operator (CPU time)");
      if (entry.kernels.length) pairedRows(block, entry.kernels, "GPU kernel");
      const r = entry.reconciliation;
      note(block, "The operators account for " + signedMs(r.operators_s) + " of the measured " + signedMs(r.measured_s) +
        "; " + signedMs(r.unexplained_s) + " unexplained (outside any operator " + signedMs(r.outside_operators_s) +
        ", the profiler's own cost " + signedMs(r.profiler_cost_s) + "), " + (r.within_bound ? "within" : "OUTSIDE") +
        " the bound of " + ms(r.bound_s) + " ms.");
      const links = element("p", { className: "traces" });
      entry.sides.forEach(function (side) {
        if (side.trace) links.append(element("a", { href: side.trace, text: "trace " + side.side + " (" + side.profiled_runs + " profiled)" }), " ");
        else links.append("trace " + side.side + ": not stored ");
      });
      links.append("(they open in ui.perfetto.dev or chrome://tracing)");
      block.append(links);
      whySection.append(block);
    });
    if (why.without_profiles) {
      note(whySection, why.without_profiles + " pair(s) or regression(s) shown above have no profile on a side: give " +
        "their sweep the job field profile, or run torchsweep explain, which profiles what it lacks.");
    }
  }

  const throughput = section("Throughput against batch size", "throughput");
  const models = Array.from(new Set((data.throughput || []).map(function (t) { return t.model; })));
  if (!models.length) note(throughput, "No throughput figures.");
  for (const model of models) throughputChart(throughput, model, data.throughput.filter(function (t) { return t.model === model; }));

  if (data.generation && data.generation.length) {
    // Per-token decode latency, eager against compiled (docs/language-models.md).
    const decode = section("Decode latency per token", "decode");
    intervalChart(decode, "decode", "Per-token decode latency: the median (p50) with a whisker to p99, eager and compiled side by side.",
      data.generation.map(function (g) {
        return { label: g.configuration + " · " + g.mode, group: g.mode, estimate: g.p50_ms, low: g.p50_ms, high: g.p99_ms,
                 text: "p50 " + number(g.p50_ms, 3) + " ms, p99 " + number(g.p99_ms, 3) + " ms, " + number(g.tokens_per_s, 3) + " tokens/s" };
      }), 0, "ms per token");
  }

  const memory = section("Peak memory, eager against compiled", "memory");
  if (data.memory && data.memory.length) memoryChart(memory, data.memory);
  else note(memory, "No configuration has memory figures for both eager and compiled.");

  if (data.scaling && data.scaling.length) {
    const scaling = section("Scaling efficiency", "scaling");
    intervalChart(scaling, "scaling", "samples/s at N ranks over N × samples/s at one rank, with 95% intervals.",
      data.scaling.map(function (s) { return { label: s.configuration + " · " + s.gpus + " ranks", group: String(s.gpus) + " ranks", estimate: s.efficiency, low: s.low, high: s.high }; }),
      1, "scaling efficiency");
  }

  const history = section("History", "history");
  if (data.trends && data.trends.length) {
    note(history, "Median epoch time per sweep over the " + data.history.sweeps + " sweeps sharing a tag with this one; " +
      "dashed red lines mark change points found by " + data.history.method + "; the shaded band is where 95% of the " +
      "sweeps' medians fall when nothing changed, from the configuration's measured noise (docs/noise.md).");
    for (const trend of data.trends) {
      history.append(element("h3", { text: trend.configuration }));
      trendChart(history, trend);
    }
  } else {
    note(history, "No history: no other sweep shares a tag with this one.");
  }

  const noise = section("Noise", "noise");
  if (data.noise && data.noise.rows.length) {
    note(noise, "Each configuration's noise over the history's runs (log-scale spreads: 0.02 is about 2%), noisiest first: " +
      "within a process, between processes, nodes and nights, and one run's; how often the rules fired on A/A pairs of " +
      "its own runs where nothing changed (nightly's, whose nominal rate is alpha / 2 = " +
      (data.noise.rows[0].nominal_rate) + ", confirm's, the change points' per night); the threshold its noise needs and " +
      "the power to see a 10% slowdown. A real change in the history widens its figures: a calibration " +
      "(torchsweep calibrate) is the clean measure. docs/noise.md tells how to read it.");
    const rate = function (v) { return v === null || v === undefined ? "-" : number(v, 3); };
    sortableTable(noise, [["configuration", "configuration"], ["processes", "runs"], ["within_cv", "within", rate],
      ["process_cv", "process", rate], ["node_cv", "node", rate], ["night_cv", "night", rate], ["run_cv", "run", rate],
      ["false_alarm_rate", "nightly false alarms", rate], ["confirm_rate", "confirm false alarms", rate],
      ["change_point_rate", "change points a night", rate], ["threshold_needed", "threshold needed", percent],
      ["power_10pct", "power at 10%", rate],
      ["note", "note", function (v) {
        if (!v) return "-";
        return element("details", {}, [element("summary", { text: "note" }), element("span", { text: v })]);
      }]],
      data.noise.rows, function (row) { return { "data-configuration": row.configuration }; });
  } else {
    note(noise, "No runs to measure noise on.");
  }

  const configurations = section("Configurations", "configurations");
  if (data.configurations && data.configurations.rows.length) {
    sortableTable(configurations, [["configuration", "configuration"], ["runs", "runs"], ["flagged", "flagged"],
      ["epoch_time_s", "epoch s", number], ["samples_per_s", "samples/s", number], ["peak_memory_mib", "peak MiB", number],
      ["compile_time_s", "compile s", number], ["graph_breaks", "graph breaks", number],
      ["cost_per_million_samples", "cost / M samples", number],
      ["inaccurate", "inaccurate"], ["accuracy_deviation", "accuracy deviation", number], ["busy", "busy node"],
      ["reproduce", "reproduce", function (v) {
        if (!v) return "-";
        return element("details", {}, [element("summary", { text: "command" }), element("code", { className: "command", text: v })]);
      }]], data.configurations.rows, function (row) { return { "data-configuration": row.configuration }; });
  }

  const environment = section("Environment", "environment");
  if (data.environments && data.environments.length) {
    sortableTable(environment, [["host", "host"], ["runner", "runner"], ["env", "env"], ["framework", "framework"], ["device", "device"],
      ["cuda", "CUDA"], ["cudnn", "cuDNN"], ["driver", "driver"], ["gpus", "GPUs"], ["cpu", "CPU"], ["cores", "cores"],
      ["blas", "BLAS"], ["os", "OS"], ["kernel", "kernel"], ["torchsweep", "torchsweep"]], data.environments);
  } else {
    note(environment, "No result, so no environment recorded.");
  }
  if (data.peaks && data.peaks.length) {
    // Which peak each utilisation (MFU) used (docs/methodology.md).
    const peaks = section("Peaks the utilisation is measured against", "peaks");
    note(peaks, "Measured by the agent at its start: the best of matrix products and convolutions per device, " +
      "dtype and thread count. A run whose rate exceeded its peak (MFU above 1) means the peak was wrong; the agent " +
      "then measured it again before its next job.");
    sortableTable(peaks, [["host", "host"], ["device", "device"], ["dtype", "dtype"],
      ["peak_flops_per_s", "peak TFLOP/s", function (v) { return number(v / 1e12, 4); }], ["kernel", "reached by"],
      ["runs", "runs"], ["highest_mfu", "highest MFU", number], ["peak_below_achieved", "runs above the peak"]],
      data.peaks);
  }

  Promise.all(views).then(function () {
    document.body.dataset.charts = String(views.length);
    document.body.dataset.rendered = "true";
  }, function (error) {
    document.body.dataset.renderError = String(error);
    console.error("torchsweep report: a chart failed to render:", error);
  });
})();
