// The jobmesh dashboard: plain JavaScript, no dependencies. Everything it
// shows comes from this node's /v1 API; job progress arrives on the
// /v1/events stream. Text from the mesh is always set with textContent.
//
// Reads need no sign-in on loopback. Opening the one-time link the daemon
// (or 'jobnode dashboard') prints, /ui/#login=CODE, trades the code for an
// HttpOnly session cookie and a CSRF token; the token is kept in this tab's
// sessionStorage (which, unlike cookies, other ports of the host cannot
// read) and sent with every request that changes state.
"use strict";

// The colours assemble.ProcessorColour gives processor index i, so that the
// share bars match the tile picture.
const PALETTE = [
  "#e6194b", "#3cb44b", "#ffe119", "#0082c8", "#f58230", "#911eb4", "#46f0f0", "#f032e6",
  "#d2f53c", "#fabed4", "#008080", "#dcbeff", "#aa6e28", "#fffac8", "#800000", "#aaffc3",
];
const REFRESH_MS = 5000;
// Fields of /v1/nodes shown in a fixed place; any other field a node
// reports (stake, QoS, weight, ...) is listed after them as it comes.
const NODE_FIELDS = ["card_model", "vram_mib", "wallet"];
const NODE_HIDDEN = new Set(["peer_id", "role", "addrs", "updated", "version"]);
// Fields of /v1/dispatch/nodes shown after them: the QoS parts, the
// timeouts in the window and the kick, as 'jobnode nodes' shows them.
const QOS_FIELDS = ["qos", "vram_score", "timeout_score", "speed_score", "weight", "timeouts", "kicked", "kicked_at"];

const CSRF_HEADER = "X-Jobmesh-CSRF";
const CSRF_KEY = "jobmesh-csrf";
let csrf = sessionStorage.getItem(CSRF_KEY) || "";

const jobs = new Map(); // job ID → apiv1.Job
const walletPeer = new Map(); // lowercase wallet → peer ID, from the processors' verified wallet bindings
let selected = location.hash.startsWith("#job=") ? location.hash.slice(5) : "";
let pictureFor = ""; // the job whose pictures are shown
const loaded = { id: false, peers: false, nodes: false, operator: false, events: false };

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "style") e.style.cssText = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function short(id) {
  return id && id.length > 16 ? id.slice(0, 8) + "…" + id.slice(-6) : id || "";
}

function ago(iso) {
  const t = Date.parse(iso);
  if (!t || t < 0) return "";
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (s < 60) return s + "s ago";
  if (s < 3600) return Math.round(s / 60) + "m ago";
  return Math.round(s / 3600) + "h ago";
}

function label(key) {
  return key.replace(/_/g, " ");
}

function show(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

// processorOrder is the colour order: the processors' peer IDs, sorted.
function processorOrder(byProcessor) {
  return Object.keys(byProcessor || {}).sort();
}

function colour(i) {
  return i < 0 ? "#808080" : PALETTE[i % PALETTE.length];
}

function markReady() {
  const ready = loaded.id && loaded.peers && loaded.nodes && loaded.operator && loaded.events;
  document.body.dataset.ready = String(ready);
}

async function getJSON(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error(path + ": " + r.status);
  return r.json();
}

function showSession(note) {
  const pill = $("session");
  pill.textContent = note || (csrf ? "signed in" : "read-only");
  pill.className = "pill " + (csrf ? "pill-live" : "pill-wait");
  document.body.dataset.session = csrf ? "signed-in" : "read-only";
}

function forget() {
  csrf = "";
  sessionStorage.removeItem(CSRF_KEY);
}

// login spends a #login=CODE fragment for a session. The code works once,
// so the fragment is dropped whatever the answer.
async function login() {
  if (!location.hash.startsWith("#login=")) return;
  const code = location.hash.slice("#login=".length);
  history.replaceState(null, "", location.pathname);
  try {
    const r = await fetch("/v1/session", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code }),
    });
    if (!r.ok) throw new Error(String(r.status));
    csrf = (await r.json()).csrf;
    sessionStorage.setItem(CSRF_KEY, csrf);
    showSession();
    renderDetail();
  } catch (err) {
    forget();
    showSession("sign-in failed (" + err.message + ")");
  }
}

// change sends a state-changing request with the session's CSRF token.
async function change(method, path) {
  const r = await fetch(path, { method, headers: { [CSRF_HEADER]: csrf, Accept: "application/json" } });
  const body = await r.json().catch(() => ({}));
  if (r.status === 401 || r.status === 403) {
    if (r.status === 401) forget(); // the session ended
    showSession();
  }
  if (!r.ok) throw new Error(body.error || String(r.status));
  return body;
}

async function cancelJob(id, note) {
  note.textContent = "";
  try {
    const j = await change("POST", `/v1/jobs/${id}/cancel`);
    jobs.set(j.id, j);
    renderJobs();
    renderDetail();
  } catch (err) {
    note.textContent = err.message;
  }
}

function renderActions(j) {
  const box = $("detail-actions");
  box.replaceChildren();
  if (!csrf || !j.mine || (j.state !== "open" && j.state !== "unfunded")) return;
  const note = el("span", { class: "error" });
  const btn = el("button", { id: "cancel-job", type: "button" }, "cancel job");
  btn.addEventListener("click", () => cancelJob(j.id, note));
  box.append(btn, note);
}

async function loadSelf() {
  const id = await getJSON("/v1/id");
  $("self-peer").textContent = id.peer_id;
  $("self-peer").title = (id.addrs || []).join("\n");
  $("self-role").textContent = id.role;
  $("self-version").textContent = id.version;
  document.body.dataset.role = id.role;
  loaded.id = true;
}

async function loadPeers() {
  const peers = await getJSON("/v1/peers");
  peers.sort((a, b) => a.peer_id.localeCompare(b.peer_id));
  const ul = $("peers");
  ul.replaceChildren(...peers.map((p) =>
    el("li", { class: "peer", "data-peer": p.peer_id, title: (p.addrs || []).join("\n") }, p.peer_id)));
  $("peer-count").textContent = peers.length;
  loaded.peers = true;
}

// qosValue is a dispatch field as shown: scores to 3 places, the weight to
// 4, the timeouts over the window they are counted in.
function qosValue(k, p, window) {
  if (k === "timeouts") return p[k] + "/" + window;
  if (k === "weight") return p[k].toFixed(4);
  if (typeof p[k] === "number") return p[k].toFixed(3);
  return p[k];
}

async function loadNodes() {
  const [nodes, dispatch] = await Promise.all([
    getJSON("/v1/nodes"),
    getJSON("/v1/dispatch/nodes").catch(() => null), // the cards show without it
  ]);
  const qos = new Map(((dispatch && dispatch.processors) || []).map((p) => [p.peer_id, p]));
  let bound = false; // a wallet newly bound to a peer
  for (const n of nodes) {
    const w = (n.wallet || "").toLowerCase();
    if (w && walletPeer.get(w) !== n.peer_id) {
      walletPeer.set(w, n.peer_id);
      bound = true;
    }
  }
  if (bound && selected) renderDetail(); // payouts name the peers
  const box = $("processors");
  box.replaceChildren(...nodes.map((n, i) => {
    const dl = el("dl");
    const add = (k, v) => dl.append(el("dt", null, label(k)), el("dd", { title: show(v) }, show(v)));
    for (const k of NODE_FIELDS) {
      if (k in n) add(k === "vram_mib" ? "VRAM (MiB)" : k, n[k]);
    }
    for (const [k, v] of Object.entries(n)) {
      const empty = v === "" || v === null || (Array.isArray(v) && v.length === 0);
      if (!NODE_FIELDS.includes(k) && !NODE_HIDDEN.has(k) && !empty) add(k, v);
    }
    const p = qos.get(n.peer_id);
    if (dispatch) add("live", p ? "yes" : "no");
    for (const k of p ? QOS_FIELDS : []) {
      if (k in p) add(k, qosValue(k, p, dispatch.timeout_window));
    }
    return el("div", { class: "card processor", "data-peer": n.peer_id },
      el("div", { class: "mono", title: n.peer_id }, short(n.peer_id)), dl);
  }));
  $("processor-count").textContent = nodes.length;
  loaded.nodes = true;
}

// ether shows a wei amount (a decimal string) in ether, to 6 places.
function ether(wei) {
  const s = String(wei).padStart(19, "0");
  const whole = s.slice(0, -18), frac = s.slice(-18, -12).replace(/0+$/, "");
  return whole + (frac ? "." + frac : "") + " ETH";
}

function mib(bytes) {
  return (bytes / (1 << 20)).toFixed(1) + " MiB";
}

// loadOperator shows this node's own view: its MicroJobs, its wallet's
// earnings, its CPU and memory, and its latest warnings.
async function loadOperator() {
  const dl = $("operator-fields");
  let op;
  try {
    op = await getJSON("/v1/operator");
  } catch (err) {
    dl.replaceChildren(el("dt", null, "unavailable"), el("dd", null, err.message));
    loaded.operator = true;
    return;
  }
  dl.replaceChildren();
  const add = (id, k, v, title) => dl.append(el("dt", null, k), el("dd", { id: "op-" + id, title: title || "" }, v));
  add("microjobs", "MicroJobs", `${op.microjobs_committed} committed`);
  add("failures", "failures", `${op.microjobs_failed} failed`);
  if (op.earnings) {
    const e = op.earnings;
    add("credited", "credited", ether(e.credited_wei), e.credited_wei + " wei, as of " + e.read_at);
    add("withdrawn", "withdrawn", ether(e.withdrawn_wei), e.withdrawn_wei + " wei");
    add("credit", "to withdraw", ether(e.credit_wei), e.credit_wei + " wei (jobnode wallet withdraw)");
  } else {
    add("credited", "earnings", "no chain read yet");
  }
  const up = op.uptime_s;
  add("cpu", "CPU", op.cpu_s < 0 ? "unknown" : `${op.cpu_s.toFixed(1)} s in ${Math.round(up)} s (${op.cpus} CPUs)`);
  add("memory", "memory", `${mib(op.memory_bytes)} (heap ${mib(op.heap_bytes)})`);
  const warnings = op.warnings.slice().reverse(); // newest first
  $("warnings").replaceChildren(...warnings.map((w) => el("li", { class: "warning", title: w.time },
    el("span", { class: "level" }, w.level), w.message,
    el("span", { class: "muted mono" }, " " + Object.keys(w.attrs || {}).sort().map((k) => `${k}=${w.attrs[k]}`).join(" ")))));
  $("warning-count").textContent = op.warnings.length;
  loaded.operator = true;
}

function shareBar(byProcessor, cls) {
  const order = processorOrder(byProcessor);
  const total = order.reduce((s, p) => s + byProcessor[p], 0);
  const bar = el("div", { class: cls });
  if (total === 0) return bar;
  order.forEach((p, i) => {
    const n = byProcessor[p];
    bar.append(el("div", {
      style: `width:${(100 * n) / total}%;background:${colour(i)}`,
      title: `${p}: ${n} MicroJob${n === 1 ? "" : "s"}`,
    }));
  });
  return bar;
}

function progressBar(j) {
  const total = Math.max(1, j.microjobs);
  const pc = (n) => Math.min(100, (100 * n) / total);
  return el("div", { class: "bar", title: `${j.committed} committed, ${j.disclosed} disclosed of ${j.microjobs} MicroJobs` },
    el("div", { class: "committed", style: `width:${pc(j.committed)}%` }),
    el("div", { class: "disclosed", style: `width:${pc(j.disclosed)}%` }),
    el("span", null, `${j.committed}/${j.microjobs} MicroJobs`));
}

function renderJobs() {
  const list = [...jobs.values()].sort((a, b) => Date.parse(b.updated) - Date.parse(a.updated) || a.id.localeCompare(b.id));
  const body = $("jobs").tBodies[0];
  body.replaceChildren(...list.map((j) => {
    const tr = el("tr", { class: "job" + (j.id === selected ? " selected" : ""), "data-job": j.id, "data-state": j.state },
      el("td", { class: "mono", title: j.id }, short(j.id), j.mine ? el("span", { class: "muted" }, " (mine)") : null),
      el("td", null, el("span", { class: "state state-" + j.state }, j.state)),
      el("td", null, progressBar(j)),
      el("td", null, shareBar(j.by_processor, "mini-shares")),
      el("td", { class: "muted", title: j.updated }, ago(j.updated)));
    tr.addEventListener("click", () => select(j.id));
    return tr;
  }));
  $("job-count").textContent = list.length;
  $("no-jobs").hidden = list.length > 0;
  if (!selected) {
    // Show the newest finished picture job without waiting for a click.
    const pic = list.find((j) => j.output === "png-grid" && j.output_cid);
    if (pic) select(pic.id);
  }
}

function select(id) {
  selected = id;
  history.replaceState(null, "", "#job=" + id);
  renderJobs();
  renderDetail();
}

function renderDetail() {
  const j = jobs.get(selected);
  $("detail").hidden = !j;
  if (!j) return;
  $("detail-id").textContent = j.id;
  const dl = $("detail-fields");
  dl.replaceChildren();
  const add = (k, v, cls) => {
    if (v === undefined || v === null || v === "") return;
    dl.append(el("dt", null, k), el("dd", cls ? { class: cls } : null, v));
  };
  add("state", el("span", { class: "state state-" + j.state }, j.state));
  // A failed job: the mesh agreed that its code cannot run; the creator
  // is refunded.
  if (j.failure) {
    const f = j.failure;
    add("failure", el("div", { class: "failure", "data-kind": f.kind },
      el("div", { class: "failure-reason" }, f.reason),
      f.micro ? el("div", { class: "muted mono", title: f.micro }, "MicroJob " + short(f.micro)) : null,
      f.reports && f.reports.length ? el("div", { class: "muted mono" }, "reported by " + f.reports.map(short).join(", ")) : null,
      f.stderr ? el("pre", { class: "stderr" }, f.stderr) : null));
  }
  add("progress", `${j.committed} committed, ${j.disclosed} disclosed of ${j.microjobs} MicroJobs in ${j.macrojobs} MacroJobs (${j.blocks} blocks)`);
  add("output kind", j.output);
  add("price", j.price_wei + " wei");
  add("creator", j.creator, "mono");
  add("code", j.code_uri, "mono");
  add("data", `${j.data_uri} (${j.data_size} bytes)`, "mono");
  add("deadline", new Date(j.deadline).toLocaleString());
  if (j.output_cid) add("output", "ipfs://" + j.output_cid, "mono");
  if (j.output_cid) add("verified", j.verified ? "every block verified" : "not verified");
  if (j.output_cid) add("culprits", j.culprits.length ? j.culprits.join(", ") : "none");
  // A block no vote decided: no verdict follows unless a late re-run
  // decides it, and the deadline refunds the creator.
  if (j.undecided && j.undecided.length) {
    const lines = j.undecided.map((u) => el("div", { title: u.sides.join(", ") },
      `block ${u.block} (${u.kind}) between ${u.sides.map(short).join(" and ")}: ` +
      Object.keys(u.votes).sort().map((h) => `${h.slice(0, 12)}=${u.votes[h]}`).join(" ") + ` — ${u.reason}`));
    add("undecided", el("div", null, ...lines), "mono");
  }
  add("verifier digest", j.verifier_digest, "mono");
  add("settlement tx", j.settlement_tx, "mono");
  if (j.payouts) add("payouts", payoutLines(j), "mono payouts");
  add("refund", j.refund_wei ? j.refund_wei + " wei" : "");
  const order = processorOrder(j.by_processor);
  const legend = el("ul", { class: "legend" }, ...order.map((p, i) =>
    el("li", { "data-peer": p, title: p }, el("span", { class: "swatch", style: "background:" + colour(i) }),
      `${short(p)}: ${j.by_processor[p]} MicroJob${j.by_processor[p] === 1 ? "" : "s"}`)));
  $("detail-shares").replaceChildren(shareBar(j.by_processor, "shares"), legend);
  renderActions(j);
  renderPictures(j);
}

// payoutLines lists a settled job's payouts by processor, as the legend
// does, each with its colour and the wallet it was paid to.
function payoutLines(j) {
  const order = processorOrder(j.by_processor);
  return el("div", null, ...Object.keys(j.payouts).sort().map((w) => {
    const peer = walletPeer.get(w.toLowerCase()) || "";
    const i = peer ? order.indexOf(peer) : -1;
    return el("div", { class: "payout", "data-wallet": w, "data-peer": peer, title: (peer ? peer + "\n" : "") + w },
      el("span", { class: "swatch", style: "background:" + colour(i) }),
      `${peer ? short(peer) : "(no bound peer)"}  wallet ${short(w)}  ${j.payouts[w]} wei`);
  }));
}

// renderPictures shows the assembled picture and the tile map of a
// verified png-grid job, and nothing for any other job.
function renderPictures(j) {
  const ready = j.output === "png-grid" && j.verified && j.output_cid;
  $("pictures").hidden = !ready;
  if (!ready && pictureFor) {
    pictureFor = "";
    $("picture").removeAttribute("src");
    $("picture").dataset.loaded = "none";
    $("tiles").removeAttribute("src");
    $("tiles").dataset.loaded = "none";
    $("tile-legend").replaceChildren();
  }
  if (!ready || pictureFor === j.id) return;
  pictureFor = j.id;
  const pic = $("picture");
  pic.dataset.loaded = "false";
  pic.onload = () => { pic.dataset.loaded = String(pic.naturalWidth > 0); };
  pic.onerror = () => { pic.dataset.loaded = "error"; };
  pic.src = `/v1/jobs/${j.id}/output`;
  loadTiles(j.id);
}

// The tile picture is fetched, not linked, to read its legend header.
async function loadTiles(id) {
  const img = $("tiles");
  img.dataset.loaded = "false";
  try {
    const r = await fetch(`/v1/jobs/${id}/tiles.png`);
    if (!r.ok) throw new Error(String(r.status));
    const legend = (r.headers.get("X-Tile-Legend") || "").split(",").filter(Boolean);
    $("tile-legend").replaceChildren(...legend.map((e) => {
      const [peer, rgb] = e.split("=");
      return el("li", { "data-peer": peer }, el("span", { class: "swatch", style: "background:" + rgb }), short(peer));
    }));
    const url = URL.createObjectURL(await r.blob());
    img.onload = () => { img.dataset.loaded = String(img.naturalWidth > 0); };
    img.src = url;
  } catch (err) {
    img.dataset.loaded = "error";
    img.alt = "tiles by processor: " + err.message;
  }
}

function followEvents() {
  const live = $("live");
  const es = new EventSource("/v1/events");
  es.onopen = () => {
    live.textContent = "live";
    live.className = "pill pill-live";
    loaded.events = true;
    markReady();
  };
  es.onerror = () => {
    live.textContent = "reconnecting";
    live.className = "pill pill-down";
  };
  es.addEventListener("job", (ev) => {
    const e = JSON.parse(ev.data);
    jobs.set(e.job.id, e.job);
    renderJobs();
    if (e.job.id === selected) renderDetail();
  });
}

async function refresh() {
  await Promise.allSettled([loadPeers(), loadNodes(), loadOperator()]);
  markReady();
}

async function start() {
  // A login link opened in a tab that shows the dashboard already changes
  // only the fragment.
  window.addEventListener("hashchange", login);
  await login();
  showSession();
  await Promise.allSettled([loadSelf(), loadPeers(), loadNodes(), loadOperator()]);
  markReady();
  followEvents();
  setInterval(refresh, REFRESH_MS);
  setInterval(renderJobs, REFRESH_MS); // keeps "updated … ago" current
}

start();
