// ssgen console: keeps the server-rendered page live. Every key, value and
// client id is put into the page as text (textContent), never as HTML, and
// through shown(): the characters a reader cannot see or that reorder a
// line (bidi controls such as U+202E) appear as visible escapes.
"use strict";
(() => {
  const $ = (s) => document.querySelector(s);
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const st = { prefix: "", q: "", next: "", selected: null, detail: null, fetched: 0, paused: false, es: null, shown: 200 };
  const maxTraceRows = 300;

  // hiddenChars are internal/textsafe's Hidden characters (keep the two
  // alike): controls but tab and line breaks, DEL, C1 controls but NEL,
  // the byte order mark and the bidirectional controls. Issue #25: a
  // client id "evil\u202Enimda" read as another name.
  const hiddenChars = /[\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F\uFEFF\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
  function shown(s) {
    return String(s).replace(hiddenChars, (c) => "\\u" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0"));
  }
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = shown(text);
    if (cls) e.className = cls;
    return e;
  }
  function ttlText(ms) {
    if (ms < 0) return "never";
    if (ms < 1000) return ms + "ms";
    const s = ms / 1000;
    if (s < 120) return s.toFixed(1) + "s";
    if (s < 7200) return Math.floor(s / 60) + "m" + Math.floor(s % 60) + "s";
    return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
  }
  async function getJSON(url) {
    const r = await fetch(url, { credentials: "same-origin" });
    if (r.status === 401) { location.href = "/login"; throw new Error("signed out"); }
    if (!r.ok) throw new Error((await r.text()).trim());
    return r.json();
  }
  async function post(url, body) {
    const r = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Ssgen-Csrf": csrf },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error((await r.text()).trim());
    return r.json();
  }

  // --- deep links -----------------------------------------------------------
  // The address bar holds what is shown: ?prefix= (folder) or ?q=
  // (search), key= (the open key, percent-encoded as the API takes it) and
  // the trace filter (tclient=, tkey=, tresult=), so a reload or a shared
  // link opens the same view.
  function rawParam(name) {
    for (const part of location.search.slice(1).split("&")) {
      const i = part.indexOf("=");
      if (i > 0 && part.slice(0, i) === name) return part.slice(i + 1);
    }
    return "";
  }
  function param(name) { return new URLSearchParams(location.search).get(name) || ""; }
  function viewURL() {
    const p = new URLSearchParams();
    if (st.q) p.set("q", st.q); else if (st.prefix) p.set("prefix", st.prefix);
    const f = $("#tracefilter");
    if (f.client.value) p.set("tclient", f.client.value);
    if (f.key.value) p.set("tkey", f.key.value);
    if (f.result.value) p.set("tresult", f.result.value);
    let u = p.toString();
    if (st.selected) u += (u ? "&" : "") + "key=" + st.selected; // already percent-encoded by the server
    return location.pathname + (u ? "?" + u : "");
  }
  // remember puts the view in the address bar: a new history entry for a
  // move (folder, key), the same entry for a filter being typed.
  function remember(move) {
    const u = viewURL();
    if (u === location.pathname + location.search) return;
    if (move) history.pushState(null, "", u); else history.replaceState(null, "", u);
  }
  // fromURL shows the view the address bar names.
  function fromURL() {
    st.q = param("q"); st.prefix = st.q ? "" : param("prefix");
    $("#q").value = st.q;
    const f = $("#tracefilter");
    f.client.value = param("tclient"); f.key.value = param("tkey"); f.result.value = param("tresult");
    st.shown = 200;
    renderCrumbs();
    const key = rawParam("key");
    if (key) select(key, false); else { st.selected = null; st.detail = null; renderDetail(); }
  }
  window.addEventListener("popstate", () => { fromURL(); loadKeys(true); connect(); });

  // --- keys ---------------------------------------------------------------
  function keysURL(from, limit) {
    const p = new URLSearchParams();
    if (st.q) p.set("q", st.q); else if (st.prefix) p.set("prefix", st.prefix);
    if (st.q) p.set("flat", "1");
    p.set("limit", String(limit || 200));
    let u = "/api/keys?" + p.toString();
    if (from) u += "&from=" + from; // already percent-encoded by the server
    return u;
  }
  function keyRow(it) {
    const tr = el("tr");
    tr.dataset.ref = it.ref;
    tr.dataset.key = it.name;
    if (it.folder) tr.className = "folder";
    let name = it.name;
    if (!st.q && st.prefix && name.startsWith(st.prefix)) name = name.slice(st.prefix.length);
    const td = el("td");
    td.append(el("span", name, "kname"));
    if (it.declared) td.append(" ", el("span", it.declared, "declared"));
    tr.append(td, el("td", it.folder ? "" : it.size, "num"), el("td", it.folder ? "" : ttlText(it.ttl_ms), "num"));
    if (!it.folder && it.ref === st.selected) tr.classList.add("selected");
    return tr;
  }
  async function loadKeys(reset) {
    const limit = reset ? Math.min(Math.max(st.shown, 200), 1000) : 200;
    let page;
    try { page = await getJSON(keysURL(reset ? "" : st.next, limit)); } catch (e) { return; }
    const body = $("#keylist tbody");
    if (reset) body.replaceChildren();
    for (const it of page.items) body.append(keyRow(it));
    st.next = page.next || "";
    st.shown = body.children.length;
    $("#keysmore").hidden = !st.next;
    if (reset && page.items.length === 0 && st.next) { loadKeys(false); }
  }
  function renderCrumbs() {
    const nav = $("#crumbs");
    nav.replaceChildren();
    const root = el("a", "/");
    root.href = "#"; root.dataset.prefix = "";
    nav.append(root);
    if (st.q) { nav.append(el("span", " search: " + st.q)); return; }
    const parts = st.prefix.split("/").filter((p, i, a) => i < a.length - 1);
    let acc = "";
    for (const p of parts) {
      acc += p + "/";
      const a = el("a", p + "/");
      a.href = "#"; a.dataset.prefix = acc;
      nav.append(a);
    }
  }
  function openFolder(prefix) {
    st.prefix = prefix; st.q = ""; $("#q").value = ""; st.shown = 200;
    renderCrumbs(); loadKeys(true); remember(true);
  }
  $("#crumbs").addEventListener("click", (e) => {
    const a = e.target.closest("a");
    if (!a) return;
    e.preventDefault();
    openFolder(a.dataset.prefix);
  });
  $("#keylist").addEventListener("click", (e) => {
    const tr = e.target.closest("tr[data-ref]");
    if (!tr) return;
    if (tr.classList.contains("folder")) openFolder(tr.dataset.key);
    else select(tr.dataset.ref);
  });
  $("#search").addEventListener("submit", (e) => {
    e.preventDefault();
    st.q = $("#q").value.trim(); st.shown = 200;
    renderCrumbs(); loadKeys(true); remember(true);
  });
  $("#morekeys").addEventListener("click", () => loadKeys(false));

  // --- key details ----------------------------------------------------------
  async function select(ref, move) {
    if ($("#newkey").dataset.editing !== ref) placeForm(null); // another key: the edit form goes back
    st.selected = ref;
    if (move !== false) remember(true);
    for (const tr of document.querySelectorAll("#keylist tr.selected")) tr.classList.remove("selected");
    const row = document.querySelector('#keylist tr[data-ref="' + CSS.escape(ref) + '"]');
    if (row) row.classList.add("selected");
    await refreshDetail();
  }
  async function refreshDetail() {
    if (!st.selected) return;
    let d = null;
    try { d = await getJSON("/api/key?key=" + st.selected); } catch (e) { d = null; }
    const fresh = !st.detail || !d || st.detail.ref !== d.ref;
    st.detail = d; st.fetched = Date.now();
    // A key the schema decodes opens on its decoded value.
    if (fresh && d) {
      const view = d.schema && d.schema.json ? "schema" : (d.text === undefined ? "hex" : "text");
      document.querySelector('input[name="view"][value="' + view + '"]').checked = true;
    }
    renderDetail();
  }
  function renderDetail() {
    const d = st.detail;
    $("#detailbody").hidden = !d;
    $("#detailhint").hidden = !!d;
    if (!d) { placeForm(null); $("#detailhint").textContent = st.selected ? "That key no longer exists." : "Choose a key."; return; }
    $("#dname").textContent = shown(d.name);
    const dl = $("#dmeta");
    dl.replaceChildren();
    const add = (k, v, cls) => { if (v === undefined || v === null || v === "") return; dl.append(el("dt", k), el("dd", v, cls)); };
    add("bytes", d.size + (d.truncated ? " (first 64 KiB shown)" : ""));
    add("version", d.version + (d.version_time ? "  (" + d.version_time + ")" : ""));
    add("fencing token", d.fencing_token || "none");
    add("expires in", ttlText(d.ttl_ms < 0 ? -1 : Math.max(0, d.ttl_ms - (Date.now() - st.fetched))), "ttl");
    add("durable", d.durable ? "yes (kept on disk)" : "no");
    add("watchers", d.watchers.length ? d.watchers.join(", ") : "none");
    if (d.schema) add("schema", d.schema.name + (d.schema.type ? " : " + d.schema.type : "") + (d.schema.error ? " (" + d.schema.error + ")" : ""));
    if (d.schema && d.schema.guard) add("guarded by", "lock " + d.schema.guard.name + " (" + d.schema.guard.key + ")");
    if (d.lock) {
      add("lock holder", d.lock.holder + (d.lock.client ? (d.lock.connected ? " (client " + d.lock.client + ", connected)" : " (client " + d.lock.client + ", not connected)") : "") + (d.lock.from_value ? "  [recognised by its value]" : ""));
      add("lease left", ttlText(d.lock.lease_ms < 0 ? -1 : Math.max(0, d.lock.lease_ms - (Date.now() - st.fetched))), "ttl");
    }
    $("#schemaview").hidden = !(d.schema && d.schema.json);
    renderValue();
    $("#edit").disabled = !d.writable;
    $("#delete").disabled = !d.writable;
  }
  function renderValue() {
    const d = st.detail;
    if (!d) return;
    const view = document.querySelector('input[name="view"]:checked').value;
    let text;
    if (view === "schema" && d.schema && d.schema.json) text = d.schema.json;
    else if (view === "hex" || d.text === undefined) text = d.hex.replace(/(..)/g, "$1 ").trim();
    else text = d.text;
    $("#dvalue").textContent = shown(text);
  }
  for (const r of document.querySelectorAll('input[name="view"]')) r.addEventListener("change", renderValue);
  setInterval(() => { if (st.detail && (st.detail.ttl_ms >= 0)) renderDetail(); }, 1000);

  // --- writes, each behind a confirmation -----------------------------------
  function confirmWith(text, detail) {
    return new Promise((resolve) => {
      const dlg = $("#confirm");
      $("#confirmtext").textContent = shown(text);
      $("#confirmdetail").textContent = shown(detail || "");
      dlg.returnValue = "";
      dlg.addEventListener("close", () => resolve(dlg.returnValue === "ok"), { once: true });
      dlg.showModal();
    });
  }
  function report(res) {
    const msg = res.ok ? "Done: " + res.result : "Refused: " + (res.error || res.result) + (res.reason ? " (" + res.reason + ")" : "");
    const p = el("p", msg, res.ok ? "flash ok" : "flash error");
    p.setAttribute("role", "status");
    $("#detail").prepend(p);
    setTimeout(() => p.remove(), 6000);
  }
  // A fenced key's delete asks, in the same dialog, how to fence it: by
  // taking the key's guard lock (when the schema declares one), or with a
  // token the person pastes.
  $("#fencetoken").addEventListener("input", () => { document.querySelector('input[name="fence"][value="token"]').checked = true; });
  $("#delete").addEventListener("click", async () => {
    const d = st.detail;
    if (!d) return;
    const fenced = !!d.fencing_token;
    const guard = d.schema && d.schema.guard;
    $("#fence").hidden = !fenced;
    $("#fenceguardrow").hidden = !guard;
    $("#fenceguard").textContent = guard ? shown(guard.name + " (" + guard.key + ")") : "";
    $("#fencetoken").value = "";
    document.querySelector('input[name="fence"][value="' + (guard ? "guard" : "token") + '"]').checked = true;
    const ok = await confirmWith("Delete this key?", d.name);
    $("#fence").hidden = true;
    if (!ok) return;
    const body = { key: d.ref };
    if (fenced) {
      const how = document.querySelector('input[name="fence"]:checked').value;
      if (how === "guard") body.guard = true;
      if (how === "token") body.fencing_token = $("#fencetoken").value.trim();
    }
    try { report(await post("/api/delete", body)); } catch (e) { report({ ok: false, error: e.message }); }
    refreshDetail(); loadKeys(true);
  });
  $("#edit").addEventListener("click", () => {
    const d = st.detail;
    if (!d) return;
    const f = $("#setform");
    f.key.value = d.name;
    f.key.dataset.ref = d.ref;
    const hex = d.text === undefined;
    const typed = d.schema && d.schema.json && f.querySelector('input[value="schema"]');
    f.value.value = typed ? d.schema.json : hex ? d.hex : d.text;
    f.encoding.value = typed ? "schema" : hex ? "hex" : "text";
    f.value.rows = Math.min(12, Math.max(3, f.value.value.split("\n").length));
    f.persist.checked = d.durable;
    f.ttl_ms.value = d.ttl_ms > 0 ? String(Math.max(1, d.ttl_ms - (Date.now() - st.fetched))) : "";
    f.fencing_token.value = "";
    showGuard(d.schema && d.schema.guard);
    placeForm(d);
    $("#newkey").open = true;
    f.value.focus();
  });
  // The set form is the Keys panel's "New key", or after Edit… the edit of
  // the key shown, placed under that key's details and named after it.
  function placeForm(d) {
    const box = $("#newkey");
    const summary = box.querySelector("summary");
    if (d) {
      summary.textContent = "Edit " + d.name;
      box.dataset.editing = d.ref;
      box.classList.add("editing");
      $("#detailbody").append(box);
      return;
    }
    if (!box.dataset.editing) return;
    delete box.dataset.editing;
    box.classList.remove("editing");
    summary.textContent = "New key";
    box.open = false;
    const f = $("#setform");
    f.reset();
    delete f.key.dataset.ref;
    showGuard(null);
    $("#keys").append(box);
  }
  // A key the schema guards is written under its guard lock, which the
  // console takes for the write (as ssgen set does); a fencing token is
  // then not needed.
  function showGuard(guard) {
    const f = $("#setform");
    $("#guardrow").hidden = !guard;
    $("#guardname").textContent = guard ? shown(guard.name + " (" + guard.key + ")") : "";
    f.guard.checked = !!guard;
    syncToken();
  }
  function syncToken() {
    const f = $("#setform");
    const guarded = !$("#guardrow").hidden && f.guard.checked;
    $("#tokenrow").hidden = guarded;
    f.fencing_token.disabled = guarded;
  }
  $("#setform").guard.addEventListener("change", syncToken);
  $("#setform").key.addEventListener("input", (e) => { delete e.target.dataset.ref; showGuard(null); });
  // A key typed by hand is looked up in the schema (whether or not it
  // exists yet): a declared key is written as JSON, under its guard lock.
  $("#setform").key.addEventListener("change", async (e) => {
    const f = $("#setform");
    const typed = f.querySelector('input[name="encoding"][value="schema"]');
    if (!typed || !e.target.value || e.target.dataset.ref) return;
    const asked = e.target.value;
    let d = null;
    try { d = await getJSON("/api/declaration?key=" + encodeURIComponent(asked)); } catch (err) { d = null; }
    if (f.key.value !== asked) return; // typed on meanwhile
    showGuard(d && d.guard);
    if (d && !d.lock) typed.checked = true;
  });
  $("#setform").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = e.target;
    const ref = f.key.dataset.ref || encodeURIComponent(f.key.value);
    const ttl = f.ttl_ms.value ? parseInt(f.ttl_ms.value, 10) : 0;
    const guard = !$("#guardrow").hidden && f.guard.checked;
    const body = { key: ref, value: f.value.value, encoding: f.encoding.value, ttl_ms: ttl, persist: f.persist.checked };
    if (guard) body.guard = true; else body.fencing_token = f.fencing_token.value.trim();
    const what = "SET " + f.key.value + (ttl ? " PX " + ttl : "") + (body.persist ? ", kept on disk" : "") + (guard ? ", under the guard lock " + $("#guardname").textContent : body.fencing_token ? ", fenced" : "");
    if (!(await confirmWith("Set this key?", what + "\n\n" + body.value.slice(0, 2000)))) return;
    let res;
    try { res = await post("/api/set", body); } catch (err) { res = { ok: false, error: err.message }; }
    report(res);
    if (res.ok) { select(ref); loadKeys(true); }
  });

  // --- clients ----------------------------------------------------------
  async function loadClients() {
    let d;
    try { d = await getJSON("/api/clients"); } catch (e) { return; }
    $("#clientcount").textContent = d.external ? "(attached to another broker: it owns the connections)" : "(" + d.total + ")";
    const body = $("#clientlist tbody");
    body.replaceChildren();
    for (const c of d.clients) {
      const tr = el("tr", null, c.connected ? "" : "gone");
      tr.dataset.client = c.id;
      const subs = c.subscriptions.map((s) => s.hidden ? "(a key you may not read)" : s.key ? "notify " + s.key : s.filter);
      const id = el("td");
      id.append(el("span", c.id, "cid"));
      if (!c.connected) id.append(" ", el("span", "(disconnected, session kept)", "note"));
      id.title = shown(c.id + " from " + c.remote);
      const watching = c.watching.map((k) => k.name).join(", ");
      const w = el("td", c.watches, "num");
      if (watching) w.title = shown(watching);
      tr.append(id, el("td", c.user || ""), el("td", subs.join("\n"), "subs"), w);
      body.append(tr);
    }
  }
  setInterval(() => { if (!document.hidden) loadClients(); }, 2000);

  // --- trace and live updates --------------------------------------------
  function traceQuery() {
    const f = $("#tracefilter");
    const p = new URLSearchParams();
    for (const n of ["client", "key", "result"]) if (f[n].value) p.set(n, f[n].value);
    return p;
  }
  function traceRow(ev) {
    const tr = el("tr", null, ev.failed ? "failed" : "");
    tr.dataset.key = ev.key || "";
    // A row of a whole key opens it (a cut key cannot be named; SCAN's
    // is a pattern).
    if (ev.ref && !ev.key_cut && ev.verb !== "SCAN") { tr.dataset.ref = ev.ref; tr.classList.add("open"); tr.title = "open this key"; }
    const t = new Date(ev.time);
    const time = t.toLocaleTimeString([], { hour12: false }) + "." + String(t.getMilliseconds()).padStart(3, "0");
    const client = ev.client + (ev.console ? " (console)" : "");
    const cl = el("td", client, "cid");
    cl.title = shown(client);
    tr.append(el("td", time), cl, el("td", ev.verb), el("td", ev.key), el("td", ev.result, "result"), el("td", ev.latency_us, "num"), el("td", ev.reason, "why"));
    return tr;
  }
  function addTrace(events) {
    if (st.paused || document.hidden) return;
    const body = $("#tracelist tbody");
    const frag = document.createDocumentFragment();
    for (let i = events.length - 1; i >= 0; i--) frag.append(traceRow(events[i]));
    body.prepend(frag);
    while (body.children.length > maxTraceRows) body.lastElementChild.remove();
  }
  // A change reloads the key list only when it can change what the list
  // shows (a new item, or a shown key deleted), at most once a second;
  // rewriting keys already listed changes nothing there.
  let keysTimer = 0, detailTimer = 0, lastKeysLoad = 0;
  function shownItem(key) {
    if (!key.startsWith(st.prefix)) return null;
    const rest = key.slice(st.prefix.length);
    const i = rest.indexOf("/");
    return i >= 0 ? st.prefix + rest.slice(0, i + 1) : key;
  }
  function listAffected(c) {
    if (st.q) return true;
    const item = shownItem(c.key);
    if (item === null) return false;
    const row = document.querySelector('#keylist tr[data-key="' + CSS.escape(item) + '"]');
    if (row) return c.deleted && item === c.key;
    if (c.deleted) return false;
    // Not shown: new, unless it belongs to a page not loaded yet.
    const rows = $("#keylist tbody").children;
    return !st.next || rows.length === 0 || item < rows[rows.length - 1].dataset.key;
  }
  function scheduleKeys() {
    if (keysTimer) return;
    const wait = Math.max(100, 1000 - (Date.now() - lastKeysLoad));
    keysTimer = setTimeout(() => { keysTimer = 0; lastKeysLoad = Date.now(); loadKeys(true); }, wait);
  }
  function onChanges(changes, all) {
    let keys = !!all, detail = false;
    for (const c of changes) {
      if (c.ref === st.selected) detail = true;
      if (!keys && listAffected(c)) keys = true;
    }
    if (keys) scheduleKeys();
    if (detail && !detailTimer) detailTimer = setTimeout(() => { detailTimer = 0; refreshDetail(); }, 250);
  }
  async function connect() {
    if (st.es) st.es.close();
    const q = traceQuery();
    let since = "";
    try {
      const d = await getJSON("/api/trace?" + q.toString());
      $("#tracelist tbody").replaceChildren();
      addTrace(d.events);
      since = String(d.next);
    } catch (e) { /* the stream still starts */ }
    if (since) q.set("since", since);
    const es = new EventSource("/events?" + q.toString());
    st.es = es;
    es.addEventListener("open", () => { $("#live").textContent = "live"; $("#live").className = "live on"; });
    es.addEventListener("error", () => { $("#live").textContent = "reconnecting"; $("#live").className = "live off"; });
    es.addEventListener("trace", (e) => addTrace(JSON.parse(e.data)));
    es.addEventListener("keys", (e) => onChanges(JSON.parse(e.data)));
    es.addEventListener("lost", (e) => {
      const d = JSON.parse(e.data);
      const p = $("#lost");
      p.hidden = false;
      p.textContent = "Busy: " + d.trace + " requests and " + d.keys + " key changes went by faster than shown.";
      if (d.keys > 0) onChanges([], true);
    });
  }
  // openKey opens a key named in the trace: its folder in the key list,
  // and its details.
  function openKey(ref, name) {
    const folder = name.startsWith('"') ? null : name.slice(0, name.lastIndexOf("/") + 1);
    if (folder !== null && (st.q || folder !== st.prefix)) {
      st.prefix = folder; st.q = ""; $("#q").value = ""; st.shown = 200;
      renderCrumbs(); loadKeys(true);
    }
    select(ref);
  }
  $("#tracelist").addEventListener("click", (e) => {
    const tr = e.target.closest("tr[data-ref]");
    if (tr && !window.getSelection().toString()) openKey(tr.dataset.ref, tr.dataset.key);
  });
  $("#tracefilter").addEventListener("change", () => { remember(false); connect(); });
  $("#tracefilter").addEventListener("submit", (e) => { e.preventDefault(); remember(false); connect(); });
  $("#pause").addEventListener("click", (e) => {
    st.paused = !st.paused;
    e.target.textContent = st.paused ? "Resume" : "Pause";
  });

  // --- the manual clock ------------------------------------------------------
  // Shown when the server runs on a manual clock and serves /api/clock
  // (ssgen serve --clock manual): Advance moves it forward.
  async function loadClock() {
    let c;
    try { c = await getJSON("/api/clock"); } catch (e) { return; }
    if (c.clock !== "manual") return;
    $("#clocknow").textContent = c.now;
    $("#clock").hidden = false;
  }
  $("#clock").addEventListener("submit", async (e) => {
    e.preventDefault();
    const msg = $("#clockmsg");
    try {
      const c = await post("/api/clock", { advance: e.target.advance.value.trim() });
      $("#clocknow").textContent = c.now;
      msg.textContent = "";
      loadKeys(true); // the time left to live of every key moved
      refreshDetail();
    } catch (err) { msg.textContent = "Refused: " + err.message; }
  });

  // --- chaos rules --------------------------------------------------------------
  // Shown when the server serves /api/chaos (ssgen serve --http): the
  // rules in force with their counters, and a form that replaces them.
  function chaosText(rules) {
    const plain = rules.map((r) => { const c = Object.assign({}, r); delete c.fired; delete c.left; return c; });
    return JSON.stringify({ rules: plain }, null, 2);
  }
  function renderChaos(rules) {
    const tb = $("#chaoslist tbody");
    tb.replaceChildren();
    rules.forEach((r, i) => {
      const m = [r.verbs && r.verbs.length ? r.verbs.join(",") : "any verb"];
      if (r.key) m.push("key " + r.key);
      if (r.client) m.push("client " + r.client);
      let eff = r.effect;
      if (r.effect === "error") eff += ": " + r.error;
      if (r.effect === "delay") eff += " " + r.delay;
      if (r.probability) eff += ", probability " + r.probability;
      const tr = el("tr");
      tr.append(el("td", r.name || "rule " + (i + 1)), el("td", m.join(" ")), el("td", eff),
        el("td", r.fired, "num"), el("td", r.left === undefined ? "" : r.left, "num"));
      tb.append(tr);
    });
    if (!rules.length) { const tr = el("tr"); tr.append(el("td", "no rules")); tb.append(tr); }
  }
  async function loadChaos(fill) {
    let d;
    try { d = await getJSON("/api/chaos"); } catch (e) { return; }
    $("#chaos").hidden = false;
    renderChaos(d.rules);
    const ta = $("#chaosform").rules;
    if (fill && d.rules.length && !ta.value) ta.value = chaosText(d.rules);
  }
  async function sendChaos(method, body) {
    const r = await fetch("/api/chaos", {
      method, credentials: "same-origin", body,
      headers: { "Content-Type": "application/yaml", "X-Ssgen-Csrf": csrf },
    });
    if (!r.ok) throw new Error((await r.text()).trim());
    return r.json();
  }
  $("#chaosform").addEventListener("submit", async (e) => {
    e.preventDefault();
    const msg = $("#chaosmsg");
    try {
      const d = await sendChaos("PUT", e.target.rules.value);
      renderChaos(d.rules);
      msg.textContent = "Applied: " + d.rules.length + " rule" + (d.rules.length === 1 ? "" : "s") + ".";
    } catch (err) { msg.textContent = "Refused: " + err.message; }
  });
  $("#chaosclear").addEventListener("click", async () => {
    const msg = $("#chaosmsg");
    try {
      const d = await sendChaos("DELETE");
      renderChaos(d.rules);
      msg.textContent = "Cleared.";
    } catch (err) { msg.textContent = "Refused: " + err.message; }
  });
  $("#chaosrefresh").addEventListener("click", () => loadChaos(false));

  const next = $("#morekeys").dataset.next;
  st.next = next || "";
  fromURL();
  st.shown = $("#keylist tbody").children.length;
  // The server rendered the folder's keys by their full names: show them
  // as the script does, relative to the folder.
  if (st.prefix || st.q) loadKeys(true);
  loadClients();
  loadClock();
  loadChaos(true);
  connect();
  document.body.dataset.ready = "1";
})();
