// The report's script: it decodes the embedded model and draws the page.
// Every string of the capture reaches the page as a text node or an
// attribute value set through the DOM, never as markup.
"use strict";
(async () => {
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  function el(tag, attrs, ...kids) {
    const n = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "style") Object.assign(n.style, v); // through the CSSOM, which the page's CSP allows
      else n.setAttribute(k, String(v));
    }
    for (const k of kids) if (k !== undefined && k !== null) n.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return n;
  }
  function dur(ns) {
    if (ns === undefined || ns === null || ns < 0) return "—";
    const a = Math.abs(ns);
    if (a < 1e3) return ns + "ns";
    if (a < 1e6) return (ns / 1e3).toFixed(1) + "µs";
    if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 2 : 1) + "ms";
    if (a < 60e9) return (ns / 1e9).toFixed(2) + "s";
    return (ns / 60e9).toFixed(1) + "m";
  }
  async function load() {
    const b64 = $("sonde-data").textContent.trim();
    const bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }
  const M = await load();
  const bySeq = new Map();
  M.rows.forEach((r, i) => bySeq.set(r.seq, i));
  document.title = "sonde report: " + (M.meta.server || M.meta.file);

  // Header.
  function header() {
    const m = M.meta, dl = $("meta");
    const add = (k, v, key) => { if (v !== "" && v !== undefined && v !== null) dl.append(el("dt", {}, k), el("dd", { "data-k": key }, v)); };
    add("file", m.file, "file");
    add("server", [m.server, m.version].filter(Boolean).join(" "), "server");
    add("protocol", m.protocol, "protocol");
    add("era", m.era, "era");
    add("host / client", m.client, "client");
    add("transport", m.transport + (m.url ? " " + m.url : "") + (m.command ? " " + m.command.join(" ") : ""), "transport");
    add("started", m.start, "start");
    add("duration", dur(m.duration), "duration");
    add("events", m.events, "events");
    add("frames", m.frames, "frames");
    add("requests", m.requests, "requests");
    add("tool calls", m.calls, "calls");
    add("errors", m.errors, "errors");
    if (m.injected) add("injected by sonde", m.injected + " requests, " + m.injectedErrors + " errors", "injected");
    add("redacted", (m.redaction || []).join(", "), "redaction");
    const v = $("verdicts");
    for (const [k, n] of Object.entries(m.verdicts).sort()) v.append(el("li", { "data-verdict": k, class: "v-" + k }, k + " ", el("b", {}, n)));
    $("sonde-version").textContent = m.sonde;
  }

  // Waterfall: a lane per direction, a row per request.
  const WF_LIMIT = 1500; // rows drawn at once; zooming in shows the rest
  const view = { from: 0, to: Math.max(M.meta.duration, 1) };
  function waterfall() {
    const box = $("wf-rows");
    box.replaceChildren();
    const span = view.to - view.from, pct = (t) => ((t - view.from) / span) * 100;
    const who = M.diagram.client || "sonde";
    const lanes = [["out", false, who + " → server"], ["out", true, "sonde (injected) → server"], ["in", false, "server → " + who]];
    let drawn = 0, hidden = 0;
    for (const [dir, inj, name] of lanes) {
      const spans = M.spans.filter((s) => s.dir === dir && !!s.inj === inj);
      if (!spans.length) continue;
      box.append(el("div", { class: "lane" }, name + " (" + spans.length + ")"));
      for (const s of spans) {
        const end = s.end < 0 ? M.meta.duration : s.end;
        if (end < view.from || s.start > view.to) continue;
        if (drawn >= WF_LIMIT) { hidden++; continue; }
        drawn++;
        const track = el("div", { class: "track" });
        const left = Math.max(pct(s.start), 0), right = Math.min(pct(end), 100);
        const bar = el("div", { class: "bar st-" + s.state + (s.failed ? " failed" : "") + (s.end < 0 ? " open" : ""),
          style: { left: left + "%", width: Math.max(right - left, 0.3) + "%" }, title: s.method + " " + s.state + " " + dur(s.latency) });
        track.append(bar);
        for (const t of s.ticks || []) if (t >= view.from && t <= view.to) track.append(el("i", { class: "tick", style: { left: pct(t) + "%" }, title: "progress" }));
        for (const mk of s.marks || []) if (mk.t >= view.from && mk.t <= view.to)
          track.append(el("i", { class: "mark m-" + mk.v, style: { left: pct(mk.t) + "%" }, title: mk.v + " answer (#" + mk.seq + ")" }));
        const label = [s.method, s.tool, "id " + s.id, s.retryOf ? "↻ retry of " + s.retryOf : ""].filter(Boolean).join(" ");
        if (s.retryOf) bar.title += "; chain from id " + s.chain + ": the server's share " + dur(s.serverShare) + ", the client answered in " + dur(s.clientWait);
        const row = el("div", { class: "wf-row", tabindex: 0, role: "button", "data-id": s.id, "data-state": s.state },
          el("span", { class: "wf-label" }, label), track, el("span", { class: "wf-lat" }, s.end < 0 ? s.state : dur(s.latency)));
        const seqs = (s.seqs || []).concat((s.marks || []).map((m) => m.seq));
        row.addEventListener("click", () => seqs.length && jump(seqs[0]));
        row.addEventListener("keydown", (e) => { if (e.key === "Enter" && seqs.length) jump(seqs[0]); });
        box.append(row);
      }
    }
    if (hidden) box.append(el("p", { class: "keys", id: "wf-more" }, hidden + " more requests in this window: zoom in (+) to see them"));
    $("wf-window").textContent = dur(view.from) + " – " + dur(view.to);
  }
  function zoom(f) {
    const mid = (view.from + view.to) / 2, half = Math.max((view.to - view.from) * f / 2, 1000);
    view.from = Math.max(mid - half, 0); view.to = Math.min(mid + half, Math.max(M.meta.duration, 1));
    waterfall();
  }
  function pan(f) {
    const w = view.to - view.from, total = Math.max(M.meta.duration, 1);
    view.from = Math.min(Math.max(view.from + w * f, 0), total - w); view.to = view.from + w;
    waterfall();
  }
  function latencyTable() {
    const tb = $("latency").tBodies[0];
    // Latencies are of the requests answered: none answered, none to show.
    const lat = (m, v) => (m.answered ? dur(v) : "—");
    for (const m of M.methods) tb.append(el("tr", {}, el("td", {}, m.dir), el("td", {}, m.method), el("td", {}, m.tool || ""),
      el("td", {}, m.count), el("td", {}, m.errors), el("td", {}, lat(m, m.p50)), el("td", {}, lat(m, m.p95)), el("td", {}, lat(m, m.p99)), el("td", {}, lat(m, m.max))));
  }

  // Sequence diagram in SVG: the steps of the Mermaid export.
  function sequence() {
    const steps = M.diagram.steps, W = 760, C = 120, S = 640, H = 34, top = 40, I = 260;
    const svg = el("svg:svg", { viewBox: "0 0 " + W + " " + (top + steps.length * H + 20), role: "img", "aria-label": "sequence diagram" });
    svg.append(el("svg:text", { x: C, y: 20, class: "who" }, M.diagram.client || "sonde"), el("svg:text", { x: S, y: 20, class: "who" }, M.diagram.server));
    const h = top + steps.length * H;
    svg.append(el("svg:line", { x1: C, y1: 28, x2: C, y2: h, class: "life" }), el("svg:line", { x1: S, y1: 28, x2: S, y2: h, class: "life" }));
    // sonde's own lane: the requests it injected into a host's session.
    if (M.diagram.injected) svg.append(el("svg:text", { x: I, y: 20, class: "who" }, "sonde"), el("svg:line", { x1: I, y1: 28, x2: I, y2: h, class: "life" }));
    steps.forEach((s, i) => {
      const y = top + i * H + 22, g = el("svg:g", { class: "step " + (s.note ? "note" : "a-" + s.arrow), "data-seq": s.seq, tabindex: 0 });
      if (s.note) {
        const x = s.where === "left" ? 10 : s.where === "right" ? S - 100 : C;
        const w = s.where === "over" ? S - C : 220;
        g.append(el("svg:rect", { x, y: y - 16, width: w, height: 22, rx: 3 }), el("svg:text", { x: x + 6, y: y - 1 }, s.label));
      } else {
        const c = s.inj ? I : C, x1 = s.dir === "out" ? c : S, x2 = s.dir === "out" ? S : c;
        g.append(el("svg:line", { x1, y1: y, x2, y2: y }), el("svg:text", { x: (C + S) / 2, y: y - 6, "text-anchor": "middle" }, s.label));
        const d = x2 > x1 ? -8 : 8;
        g.append(s.arrow === "bad" ? el("svg:path", { d: `M${x2 + d - 4},${y - 4}l8,8m0,-8l-8,8`, class: "head" }) :
          el("svg:path", { d: `M${x2},${y}l${d},-5l0,10z`, class: "head" + (s.arrow === "notify" ? " open" : "") }));
      }
      if (s.seq) { g.addEventListener("click", () => jump(s.seq)); g.addEventListener("keydown", (e) => e.key === "Enter" && jump(s.seq)); }
      svg.append(g);
    });
    $("seq").append(svg);
  }

  // Frames, with the filter language.
  const LIMIT = 2000;
  let shown = [];
  function frames() {
    const q = $("q").value, err = $("q-err"), tb = $("frames").tBodies[0];
    let f;
    try { f = sondeFilter.parse(q); err.textContent = ""; $("q").removeAttribute("aria-invalid"); }
    catch (e) { err.textContent = e.message; $("q").setAttribute("aria-invalid", "true"); return; }
    shown = M.rows.filter((r) => !r.it || sondeFilter.match(f, r.it, r.it.payload !== undefined ? r.it.payload : (r.raw || ""), r.it.payload !== undefined || !!r.u8 || !r.raw));
    tb.replaceChildren();
    for (const r of shown.slice(0, LIMIT)) tb.append(frameRow(r));
    $("frames").dataset.matched = shown.length;
    $("count").textContent = shown.length + " of " + M.rows.length + " rows" + (shown.length > LIMIT ? " (first " + LIMIT + " shown)" : "");
  }
  function frameRow(r) {
    const what = r.k === "frame" ? r.v : r.k;
    const text = r.k === "frame" ? (r.det || (r.raw || "").slice(0, 160)) : (r.x || "").slice(0, 300);
    const marks = (r.f || []).map((i) => M.findings[i].rule).join(" ");
    const tr = el("tr", { tabindex: 0, "data-seq": r.seq, "data-kind": r.k, class: "k-" + r.k + " v-" + (r.v || "") + (r.f ? " flagged" : "") },
      el("td", {}, r.seq), el("td", { class: "t" }, "+" + dur(r.t)), el("td", {}, r.d === "out" ? "→" : r.d === "in" ? "←" : ""),
      el("td", {}, what), el("td", {}, r.m || ""), el("td", { class: "id" }, r.id || ""), el("td", { class: "txt" }, text, marks ? el("b", { class: "lint" }, " ! " + marks) : null));
    tr.addEventListener("click", () => toggle(tr, r));
    return tr;
  }
  function pretty(raw) {
    try { return JSON.stringify(JSON.parse(raw), null, 2); } catch (e) { return raw; }
  }
  function toggle(tr, r) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) { next.remove(); tr.setAttribute("aria-expanded", "false"); return; }
    const body = r.raw ? pretty(r.raw) : r.x || "";
    const extra = (r.f || []).map((i) => el("div", { class: "finding" }, M.findings[i].rule + ": " + M.findings[i].detail));
    tr.after(el("tr", { class: "detail" }, el("td", { colspan: 7 }, r.k === "frame" && r.det ? el("div", {}, r.det) : null, ...extra, el("pre", {}, body))));
    tr.setAttribute("aria-expanded", "true");
  }
  function jump(seq) {
    let tr = $("frames").querySelector('tr[data-seq="' + Number(seq) + '"]');
    if (!tr) { $("q").value = ""; frames(); tr = $("frames").querySelector('tr[data-seq="' + Number(seq) + '"]'); }
    if (!tr) return;
    tr.scrollIntoView({ block: "center" });
    tr.focus();
    tr.classList.add("hit");
    setTimeout(() => tr.classList.remove("hit"), 1500);
  }

  // Findings, grouped by level then rule.
  function findings() {
    const box = $("findings");
    if (!M.findings.length) { box.append(el("p", { class: "clean" }, "No lint findings: every rule passed.")); return; }
    for (const level of ["must", "should"]) {
      const fs = M.findings.filter((f) => f.level === level);
      if (!fs.length) continue;
      const sec = el("section", { class: "level l-" + level, "data-level": level }, el("h3", {}, level.toUpperCase() + " (" + fs.length + ")"));
      for (const rule of M.rules) {
        const of = fs.filter((f) => f.rule === rule.name);
        if (!of.length) continue;
        const ul = el("ul");
        for (const f of of) {
          const a = el("button", { class: "link", "data-seq": f.seq }, "#" + f.seq);
          a.addEventListener("click", () => jump(f.seq));
          ul.append(el("li", {}, a, " " + f.detail));
        }
        sec.append(el("details", { open: true, "data-rule": rule.name }, el("summary", {}, rule.name + " — " + rule.summary + " (" + of.length + ")"), el("div", { class: "spec" }, rule.spec), ul));
      }
      box.append(sec);
    }
  }

  // Keyboard: / filters, j/k move through the frames, Enter opens one,
  // + and - zoom the waterfall, [ and ] pan it, Escape clears the filter.
  function keys() {
    $("q").addEventListener("input", frames);
    $("zin").addEventListener("click", () => zoom(0.5));
    $("zout").addEventListener("click", () => zoom(2));
    $("zreset").addEventListener("click", () => { view.from = 0; view.to = Math.max(M.meta.duration, 1); waterfall(); });
    document.addEventListener("keydown", (e) => {
      const inQuery = e.target === $("q");
      if (e.key === "Escape" && inQuery) { $("q").value = ""; frames(); return; }
      if (inQuery || e.ctrlKey || e.metaKey || e.altKey) return;
      const row = e.target.closest && e.target.closest("#frames tbody tr:not(.detail)");
      switch (e.key) {
        case "/": e.preventDefault(); $("q").focus(); break;
        case "+": case "=": zoom(0.5); break;
        case "-": zoom(2); break;
        case "[": pan(-0.25); break;
        case "]": pan(0.25); break;
        case "j": case "k": {
          const rows = [...$("frames").tBodies[0].querySelectorAll("tr:not(.detail)")];
          let i = row ? rows.indexOf(row) : -1;
          i = Math.min(Math.max(i + (e.key === "j" ? 1 : -1), 0), rows.length - 1);
          if (rows[i]) rows[i].focus();
          break;
        }
        case "Enter": if (row) { const r = M.rows[bySeq.get(Number(row.dataset.seq))]; toggle(row, r); } break;
      }
    });
  }
  header(); waterfall(); latencyTable(); sequence(); findings(); keys(); frames();
  document.body.dataset.ready = "1";
})().catch((e) => {
  document.body.dataset.ready = "error";
  const p = document.getElementById("load-error");
  p.hidden = false;
  p.textContent = "The report could not be read: " + e;
});
