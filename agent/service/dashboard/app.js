// The idletune dashboard: polls the API and draws with the DOM and inline SVG only.
// Every text from the API goes in through textContent, never as HTML: knob names,
// reasons and answers are data, not markup.
"use strict";

const POLL_MS = 2000;
const SVG = "http://www.w3.org/2000/svg";

function token() {
  // A token in the fragment (#token=...) never reaches a server log; keep it for the tab only.
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem("idletune-token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname);
  }
  const typed = document.getElementById("token").value.trim();
  if (typed) sessionStorage.setItem("idletune-token", typed);
  return sessionStorage.getItem("idletune-token") || "";
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function fmt(v) {
  if (typeof v !== "number") return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 0.01 || a >= 1e6)) return v.toExponential(2);
  return a >= 100 ? v.toFixed(0) : v.toFixed(2);
}

async function get(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}

function setStatus(text, isError) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.className = isError ? "error" : "muted";
}

function drawReport(rep) {
  const h = rep.host;
  document.getElementById("report-host").textContent =
    `${h.cpus} CPUs, ${h.gpus} GPUs${h.gpu_model ? " (" + h.gpu_model + ")" : ""}, ` +
    `${rep.window.samples} samples over ${fmt(rep.window.end - rep.window.start)} s`;
  const body = document.querySelector("#report tbody");
  body.replaceChildren();
  for (const [sub, group] of Object.entries(rep.subsystems)) {
    for (const [name, s] of Object.entries(group)) {
      const tr = el("tr");
      tr.append(el("td", name), el("td", fmt(s.value), "num"), el("td", s.unit));
      tr.dataset.subsystem = sub;
      body.append(tr);
    }
  }
  const src = document.getElementById("sources");
  src.replaceChildren();
  for (const [name, st] of Object.entries(rep.sources)) {
    src.append(el("li", `${name}: ${st.live ? "live" : "not live — " + st.reason}`, st.live ? "" : "muted"));
  }
}

function drawCauses(d) {
  document.getElementById("question").textContent = d.question;
  const ol = document.getElementById("causes");
  ol.replaceChildren();
  for (const c of d.causes.filter((c) => c.confidence >= 0.05).slice(0, 6)) {
    const li = el("li");
    li.append(el("span", `${Math.round(c.confidence * 100)}%`, "conf"), el("b", c.category), el("span", " — " + c.summary));
    ol.append(li);
  }
}

async function decide(id, verb) {
  const t = token();
  if (!t) {
    document.getElementById("approvals-note").textContent = "enter the token (from $IDLETUNE_STATE_DIR/token) first";
    return;
  }
  const r = await fetch(`/v1/actions/${encodeURIComponent(id)}/${verb}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${t}`, "Content-Type": "application/json" },
    body: JSON.stringify({ by: "dashboard" }),
  });
  const note = document.getElementById("approvals-note");
  if (r.ok) {
    const a = await r.json();
    note.textContent = `${a.id}: ${a.status}`;
    note.className = "muted";
  } else {
    const e = await r.json().catch(() => ({ detail: r.statusText }));
    note.textContent = `${id}: ${r.status} ${typeof e.detail === "string" ? e.detail : JSON.stringify(e.detail)}`;
    note.className = "error";
  }
  refresh();
}

function drawApprovals(actions) {
  const body = document.querySelector("#approvals tbody");
  body.replaceChildren();
  if (actions.pending.length === 0) {
    const tr = el("tr");
    const td = el("td", "nothing waits for approval", "muted");
    td.colSpan = 6;
    tr.append(td);
    body.append(tr);
  }
  for (const a of actions.pending) {
    const tr = el("tr");
    tr.dataset.approval = a.id;
    const knob = a.action.target === null || a.action.target === undefined
      ? a.action.primitive : `${a.action.primitive}@${a.action.target}`;
    const buttons = el("td");
    const ok = el("button", "approve", "approve");
    ok.addEventListener("click", () => decide(a.id, "approve"));
    const no = el("button", "reject", "reject");
    no.addEventListener("click", () => decide(a.id, "reject"));
    buttons.append(ok, no);
    tr.append(el("td", a.id), el("td", `${knob} → ${a.action.value}`), el("td", a.tier), el("td", a.cause || ""),
      el("td", a.action.reason), buttons);
    body.append(tr);
  }
}

function drawAudit(events) {
  const ol = document.getElementById("audit");
  ol.replaceChildren();
  for (const e of events.slice().reverse().slice(0, 50)) {
    const when = new Date(e.t * 1000).toLocaleTimeString();
    ol.append(el("li", `${when} ${e.kind}${e.knob ? " " + e.knob : ""}: ${e.summary}`));
  }
  if (events.length === 0) ol.append(el("li", "no events yet", "muted"));
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function drawKpi(k) {
  const plot = document.getElementById("kpi");
  plot.replaceChildren();
  document.getElementById("kpi-name").textContent = k.name ? `${k.name} (${k.unit})` : "";
  document.getElementById("kpi-note").textContent = k.name ? "" : k.reason;
  if (!k.points.length) return;
  const W = 800, H = 200, P = 24;
  const t0 = k.points[0][0], t1 = k.points[k.points.length - 1][0];
  const vmax = Math.max(...k.points.map((p) => p[1]), 1e-9);
  const x = (t) => P + ((t - t0) / Math.max(t1 - t0, 1e-9)) * (W - 2 * P);
  const y = (v) => H - P - (v / vmax) * (H - 2 * P);
  plot.append(svg("line", { x1: P, y1: H - P, x2: W - P, y2: H - P, class: "axis" }));
  plot.append(svg("line", { x1: P, y1: P, x2: P, y2: H - P, class: "axis" }));
  plot.append(svg("text", { x: 2, y: P - 6 }, fmt(vmax)));
  plot.append(svg("text", { x: W - P - 40, y: H - 6 }, `${fmt(t1 - t0)} s`));
  const d = k.points.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
  plot.append(svg("path", { d, class: "line" }));
  for (const m of k.markers) {
    const line = svg("line", { x1: x(m.t), y1: P, x2: x(m.t), y2: H - P, class: m.kind });
    line.append(svg("title", {}, `${m.kind}: ${m.label}`));
    plot.append(line);
  }
}

async function refresh() {
  try {
    const [rep, diag, actions, audit, kpi] = await Promise.all([
      get("/v1/report"), get("/v1/diagnosis"), get("/v1/actions"), get("/v1/audit?limit=100"), get("/v1/kpi"),
    ]);
    drawReport(rep);
    drawCauses(diag);
    drawApprovals(actions);
    drawAudit(audit);
    drawKpi(kpi);
    setStatus(`updated ${new Date().toLocaleTimeString()}`, false);
  } catch (err) {
    setStatus(String(err), true);
  }
}

document.getElementById("token-form").addEventListener("submit", (ev) => { ev.preventDefault(); token(); });
token();
refresh();
setInterval(refresh, POLL_MS);
