// app.js runs the dashboard: the admin token, polling of the admin API and
// of the throughput ring, the live feed (a WebSocket, or Server-Sent Events
// when WebSockets cannot connect), and rendering. Every
// value from the hub is put in the page as text, never as HTML.
"use strict";
(() => {
  const TOKEN_KEY = "rshub.adminToken";
  const POLL_MS = 2000;
  const FEED_MAX = 200;        // notifications kept in the feed (framework ones included)
  const ENTRIES_SHOWN = 8;     // entries shown per notification
  const REPLAY = 25;           // recent notifications replayed on page load
  const DL_SUBS_MAX = 50;      // subscriptions whose dead letters are read per poll

  const $ = sel => document.querySelector(sel);
  const state = {
    token: null, wsToken: "", started: false, pollTimer: 0, refreshing: false,
    channels: [], subs: [], deliveries: [], deadLetters: {}, throughput: null,
    ws: null, es: null, transport: "websocket", wsOpened: false, wsRetry: 1000, lastSeq: 0, received: 0, framework: 0, live: false, redriving: new Set(),
  };

  // el builds an element; children are nodes or strings (set as text).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else if (k === "title") e.title = v;
      else e.setAttribute(k, v);
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // ---- time formatting (format.js) ----
  const { isZeroTime, fmtTime, fmtWindow, fmtAgo, fmtIn } = window.rshubFormat;

  // ---- token ----
  function takeTokenFromFragment() {
    const m = location.hash.match(/(?:^#|&)token=([^&]*)/);
    if (m) {
      sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem(TOKEN_KEY);
  }
  function askToken(message) {
    stop();
    sessionStorage.removeItem(TOKEN_KEY);
    state.token = null;
    const err = $("#login-error");
    err.textContent = message || "";
    err.hidden = !message;
    $("#login").hidden = false;
    $("#login-token").focus();
  }
  $("#login-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const tok = $("#login-token").value.trim();
    if (!tok) return;
    sessionStorage.setItem(TOKEN_KEY, tok);
    $("#login-token").value = "";
    $("#login").hidden = true;
    start(tok);
  });
  $("#forget-token").addEventListener("click", () => askToken(""));

  // ---- admin API ----
  class AuthError extends Error {}
  async function api(path, method, body) {
    const opts = { method: method || "GET", cache: "no-store", headers: { Authorization: "Bearer " + state.token } };
    if (body !== undefined) {
      opts.body = JSON.stringify(body);
      opts.headers["Content-Type"] = "application/json";
    }
    const res = await fetch(path, opts);
    if (res.status === 401) throw new AuthError("the hub refused the admin token");
    if (!res.ok) throw new Error((await res.text()).trim() || res.status + " " + res.statusText);
    if (res.status === 204) return null;
    return res.json();
  }
  const enc = encodeURIComponent;

  function setPill(sel, cls, text) {
    const p = $(sel);
    p.className = "pill " + cls;
    p.textContent = text;
  }
  let toastTimer = 0;
  function toast(text, bad) {
    const t = $("#toast");
    t.textContent = text;
    t.className = bad ? "bad" : "";
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, bad ? 8000 : 3000);
  }

  // The continuity dialog (continuity.js) gets what it needs from here.
  const continuity = window.rshubContinuity({
    $, el, api, enc, toast, refresh, AuthError, fmtTime, fmtWindow, fmtAgo, isZeroTime,
    onAuthError: e => askToken(e.message),
  });

  async function refresh() {
    if (state.refreshing) return;
    state.refreshing = true;
    try {
      const [channels, subs, deliveries, throughput] = await Promise.all([
        api("../admin/channels"), api("../admin/subscriptions"), api("../admin/deliveries"), api("api/throughput"),
      ]);
      state.channels = channels || [];
      state.subs = subs || [];
      state.deliveries = deliveries || [];
      state.throughput = throughput;
      await refreshDeadLetters();
      setPill("#api-status", "ok", "admin API: ok");
      render();
    } catch (e) {
      if (e instanceof AuthError) { askToken(e.message); return; }
      setPill("#api-status", "bad", "admin API: " + e.message);
    } finally {
      state.refreshing = false;
    }
  }

  // refreshDeadLetters reads the dead letters of the subscriptions that
  // have some (or had some at the last poll).
  async function refreshDeadLetters() {
    const stats = statsByID();
    const ids = state.subs
      .filter(s => (stats[s.id] && stats[s.id].deadLetters > 0) || (state.deadLetters[s.id] || []).length > 0 || !stats[s.id])
      .slice(0, DL_SUBS_MAX).map(s => s.id);
    const lists = await Promise.all(ids.map(id => api("../admin/subscriptions/" + enc(id) + "/deadletters").catch(e => {
      if (e instanceof AuthError) throw e;
      return [];
    })));
    const next = {};
    ids.forEach((id, i) => { next[id] = lists[i] || []; });
    state.deadLetters = next;
  }

  function statsByID() {
    const m = {};
    for (const d of state.deliveries) m[d.id] = d;
    return m;
  }

  // ---- rendering ----
  function render() {
    renderChart();
    renderChannels();
    renderSubs();
    renderFilter();
  }

  function lastSeconds(series, n) {
    let sum = 0;
    for (let i = Math.max(0, series.length - n); i < series.length; i++) sum += series[i];
    return sum;
  }

  function renderChart() {
    const t = state.throughput;
    if (!t) return;
    $("#chart-window").textContent = String(Math.round(t.total.length / 60));
    window.rshubChart.draw($("#chart"), t.total);
    // The last 10 seconds, the current one included (still counting).
    $("#rate-now").textContent = "now " + window.rshubChart.fmt(lastSeconds(t.total, 10) / 10) + "/s · " +
      lastSeconds(t.total, t.total.length) + " in window";
  }

  function renderChannels() {
    const body = $("#channels tbody");
    const rows = state.channels.slice().sort((a, b) => a.name.localeCompare(b.name)).map(c => {
      const st = c.state || {};
      const series = (state.throughput && state.throughput.channels[c.name]) || [];
      const rate = lastSeconds(series, 60) / 60;
      const gaps = st.gaps || [];
      const gapCell = gaps.length === 0 ? el("td", { class: "sub" }, "none") :
        el("td", { class: "gaps", title: gaps.map(g => fmtWindow(g.from, g.until) + " (before seq " + g.seq + ")").join("\n") },
          gaps.length + (gaps.length === 1 ? " gap: " : " gaps, last: ") + fmtWindow(gaps[gaps.length - 1].from, gaps[gaps.length - 1].until));
      return el("tr", { "data-channel": c.name },
        el("td", {}, el("div", { class: "chan" }, el("strong", {}, c.name)), el("div", { class: "sub trunc", title: c.topic }, c.topic)),
        el("td", {}, c.trust),
        el("td", { class: "num" }, String(st.published || 0)),
        el("td", { class: "num" }, window.rshubChart.fmt(rate) + "/s"),
        el("td", { class: "mono nowrap", title: st.lastUntil || "" }, fmtTime(st.lastUntil)),
        el("td", { class: "num" }, st.lastSeq ? String(st.lastSeq) : "—"),
        gapCell,
        el("td", {}, continuity.button(c, st)));
    });
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: "8" }, "no channels yet"))]));
    $("#channels-count").textContent = state.channels.length + (state.channels.length === 1 ? " channel" : " channels");
  }

  // subState combines the subscription's lifecycle (pending, active,
  // expired) with the delivery engine's health (active, failing, …).
  function subState(sub, st) {
    const expired = sub.state === "expired" || (!isZeroTime(sub.expires) && Date.parse(sub.expires) < Date.now());
    if (sub.state === "pending") return "pending";
    if (expired) return "expired";
    if (!st) return sub.state === "active" ? "idle" : sub.state;
    return st.state;
  }
  const stateClass = { active: "ok", pending: "idle", idle: "idle", starting: "idle", standby: "idle", failing: "bad", stalled: "bad", "circuit-open": "bad", expired: "warn", stopped: "warn" };

  function renderSubs() {
    const body = $("#subs tbody");
    const stats = statsByID();
    const rows = [];
    const subs = state.subs.slice().sort((a, b) => (a.channel + a.callback).localeCompare(b.channel + b.callback));
    for (const s of subs) {
      const st = stats[s.id];
      const ss = subState(s, st);
      const dls = state.deadLetters[s.id] || [];
      const nDL = Math.max(dls.length, st ? st.deadLetters : 0);
      let last = el("td", { class: "sub" }, "—");
      if (st && !isZeroTime(st.lastAttempt)) {
        const ok = st.lastStatus >= 200 && st.lastStatus < 300;
        last = el("td", { title: st.lastError || "" },
          el("span", { class: ok ? "" : "bad-text" }, st.lastStatus ? "HTTP " + st.lastStatus : "error"),
          el("div", { class: "sub" }, fmtAgo(st.lastAttempt) + (st.consecutiveFailures ? " · " + st.consecutiveFailures + " failures in a row" : "")));
      }
      rows.push(el("tr", { "data-sub-id": s.id, "data-state": ss },
        el("td", {}, el("div", { class: "mono trunc", title: s.callback }, s.callback), el("div", { class: "sub mono" }, s.id.slice(0, 12))),
        el("td", {}, s.channel || el("span", { class: "sub", title: s.topic }, "(topic)")),
        el("td", {}, el("span", { class: "pill state " + (stateClass[ss] || "idle") }, ss)),
        last,
        el("td", { class: "num" }, st ? String(st.backlog) : "—"),
        el("td", { class: "num" + (nDL ? " bad-text" : "") }, String(nDL)),
        el("td", { title: s.expires || "" }, isZeroTime(s.expires) ? "—" : fmtIn(s.expires))));
      if (dls.length) rows.push(deadLetterRow(s, dls));
    }
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: "7" }, "no subscriptions yet"))]));
    $("#subs-count").textContent = state.subs.length + (state.subs.length === 1 ? " subscription" : " subscriptions");
  }

  function deadLetterRow(sub, dls) {
    const items = dls.map(d => el("div", { class: "dl", "data-dl-id": d.id, "data-seq": String(d.seq) },
      el("span", {}, "seq " + d.seq),
      el("span", { class: "bad-text" }, d.lastStatus ? "HTTP " + d.lastStatus : "error"),
      el("span", { class: "reason", title: d.reason }, d.attempts + " attempts · " + fmtAgo(d.failed) + " · " + d.reason),
      redriveButton(sub, d)));
    return el("tr", { class: "deadletters", "data-sub-id": sub.id }, el("td", { colspan: "7" }, items));
  }

  function redriveButton(sub, d) {
    const key = sub.id + "/" + d.id;
    const busy = state.redriving.has(key);
    const b = el("button", { class: "redrive", type: "button", title: "deliver seq " + d.seq + " to the callback again", disabled: busy }, busy ? "Redriving…" : "Redrive");
    b.addEventListener("click", async () => {
      if (state.redriving.has(key)) return;
      state.redriving.add(key);
      b.disabled = true;
      b.textContent = "Redriving…";
      try {
        await api("../admin/subscriptions/" + enc(sub.id) + "/deadletters/" + enc(d.id) + "/redrive", "POST");
        toast("Delivered seq " + d.seq + " to " + sub.callback);
      } catch (e) {
        if (e instanceof AuthError) { askToken(e.message); return; }
        toast("Redrive of seq " + d.seq + " failed: " + e.message, true);
      } finally {
        state.redriving.delete(key);
      }
      refresh();
    });
    return b;
  }

  function renderFilter() {
    const sel = $("#feed-filter");
    const names = state.channels.map(c => c.name).sort();
    const have = Array.from(sel.options).slice(1).map(o => o.value);
    if (names.join("\n") === have.join("\n")) return;
    const cur = sel.value;
    sel.replaceChildren(el("option", { value: "" }, "all channels"), ...names.map(n => el("option", { value: n }, n)));
    sel.value = names.includes(cur) ? cur : "";
  }
  $("#feed-filter").addEventListener("change", applyFilter);
  $("#feed-framework").addEventListener("change", applyFilter);
  function applyFilter() {
    const want = $("#feed-filter").value;
    const framework = $("#feed-framework").checked;
    for (const li of $("#feed").children) {
      const parent = li.dataset.parent;
      const off = li.classList.contains("fwnote") ? !framework || (!!want && parent !== want)
        : !!want && !!li.dataset.channel && li.dataset.channel !== want;
      li.classList.toggle("hidden", off);
    }
  }

  // frameworkParent returns the channel whose framework channel ("<name>-framework",
  // not stored) channel is, or "". Framework notifications are about documents,
  // not resources: hidden unless the "framework" toggle is on, never counted.
  function frameworkParent(channel) {
    const suffix = "-framework";
    if (!channel || !channel.endsWith(suffix) || channel.length === suffix.length) return "";
    if (state.channels.some(c => c.name === channel)) return "";
    return channel.slice(0, -suffix.length);
  }

  // ---- live feed ----
  function wsURL(since) {
    const u = new URL("../ws", location.href);
    u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    u.searchParams.set("channels", "*");
    u.searchParams.set("since", String(since));
    if (state.wsToken) u.searchParams.set("token", state.wsToken);
    return u.toString();
  }

  function eventsURL(since) {
    const u = new URL("../events", location.href);
    u.searchParams.set("channels", "*");
    u.searchParams.set("since", String(since));
    if (state.wsToken) u.searchParams.set("token", state.wsToken);
    return u.toString();
  }

  // startSeq is where a new session starts: after the last notification
  // seen, or REPLAY notifications back on page load.
  function startSeq() {
    if (state.lastSeq !== 0) return state.lastSeq;
    const top = Math.max(0, ...state.channels.map(c => (c.state && c.state.lastSeq) || 0));
    return Math.max(0, top - REPLAY);
  }

  // onFrame handles a frame of either transport.
  function onFrame(f, via) {
    if (f.type === "notification") addNotification(f);
    else if (f.type === "gap") addGap(f);
    else if (f.type === "live") {
      state.lastSeq = Math.max(state.lastSeq, f.seq);
      state.live = true;
      setPill("#ws-status", "ok", "feed: live" + via);
    }
  }

  function setTransport(t) {
    state.transport = t;
    document.body.dataset.feed = t;
  }

  function connect() {
    if (!state.started) return;
    if (state.transport === "sse") { connectEvents(); return; }
    setTransport("websocket");
    setPill("#ws-status", "idle", "feed: connecting…");
    state.live = false;
    const ws = new WebSocket(wsURL(startSeq()));
    state.ws = ws;
    ws.onopen = () => { state.wsOpened = true; state.wsRetry = 1000; setPill("#ws-status", "warn", "feed: replaying…"); };
    ws.onmessage = ev => {
      let f;
      try { f = JSON.parse(ev.data); } catch { return; }
      onFrame(f, "");
    };
    ws.onclose = ev => {
      if (state.ws !== ws) return;
      state.ws = null;
      if (!state.started) return;
      if (!state.wsOpened && typeof EventSource !== "undefined") {
        // WebSockets never connected from this page (a proxy or firewall
        // that blocks them): Server-Sent Events carry the same feed.
        setTransport("sse");
        connectEvents();
        return;
      }
      const why = ev.reason ? " (" + ev.reason + ")" : "";
      setPill("#ws-status", "bad", "feed: disconnected" + why + ", retrying");
      setTimeout(connect, state.wsRetry);
      state.wsRetry = Math.min(state.wsRetry * 2, 10000);
    };
  }

  // connectEvents follows the feed with an EventSource, which reconnects by
  // itself after a drop and resumes with Last-Event-ID (the hub prefers it
  // to since); only when the hub refuses a reconnection (an answer other
  // than 200) does the page start a new one, from the last seq it has.
  function connectEvents() {
    const via = " (Server-Sent Events)";
    setPill("#ws-status", "idle", "feed: connecting" + via + "…");
    state.live = false;
    const es = new EventSource(eventsURL(startSeq()));
    state.es = es;
    const handle = ev => {
      if (state.es !== es) return;
      let f;
      try { f = JSON.parse(ev.data); } catch { return; }
      onFrame(f, via);
    };
    for (const type of ["notification", "gap", "live"]) es.addEventListener(type, handle);
    es.addEventListener("end", ev => {
      let f = {};
      try { f = JSON.parse(ev.data); } catch { /* keep the default */ }
      state.live = false;
      setPill("#ws-status", "bad", "feed: ended" + (f.reason ? " (" + f.reason + ")" : "") + ", resuming");
    });
    es.onopen = () => { state.wsRetry = 1000; setPill("#ws-status", "warn", "feed: replaying" + via + "…"); };
    es.onerror = () => {
      if (state.es !== es) return;
      state.live = false;
      if (es.readyState !== EventSource.CLOSED) {
        setPill("#ws-status", "bad", "feed: disconnected, reconnecting" + via);
        return;
      }
      state.es = null;
      if (!state.started) return;
      setPill("#ws-status", "bad", "feed: refused, retrying" + via);
      setTimeout(connect, state.wsRetry);
      state.wsRetry = Math.min(state.wsRetry * 2, 10000);
    };
  }

  function changeOf(e) {
    return ["created", "updated", "deleted"].includes(e.change) ? e.change : "none";
  }

  function addNotification(n) {
    state.lastSeq = Math.max(state.lastSeq, n.seq);
    const parent = frameworkParent(n.channel);
    if (parent) state.framework++;
    else state.received++;
    const entries = n.entries || [];
    const shown = entries.slice(0, ENTRIES_SHOWN).map(e => el("li", {},
      el("span", { class: "change " + changeOf(e) }, e.change || "—"),
      el("span", { class: "loc mono", title: e.loc + (e.datetime ? "\n" + e.change + " at " + e.datetime : "") }, e.loc)));
    if (entries.length > ENTRIES_SHOWN) shown.push(el("li", { class: "sub" }, "… and " + (entries.length - ENTRIES_SHOWN) + " more"));
    let detail = null;
    if (n.error) detail = el("div", { class: "bad-text" }, n.error);
    else if (entries.length === 0) detail = el("div", { class: "sub" }, n.content_type || "no entries");
    const kind = parent ? "fwnote" : "note";
    const li = el("li", { class: state.live ? kind + " fresh" : kind, "data-seq": String(n.seq), "data-channel": n.channel, "data-parent": parent || null },
      el("div", { class: "note-head" },
        el("span", { class: "chan" }, n.channel),
        el("span", { class: "seq" }, "#" + n.seq),
        el("span", { class: "window mono", title: "from " + (n.from || "—") + "\nuntil " + (n.until || "—") + "\nreceived " + (n.received || "—") }, fmtWindow(n.from, n.until)),
        el("span", { class: "count" }, entries.length + (entries.length === 1 ? " entry" : " entries"))),
      shown.length ? el("ul", { class: "entries" }, shown) : null,
      detail);
    prepend(li);
  }

  function addGap(g) {
    prepend(el("li", { class: "gap" }, "⚠ gap: seq " + g.missing_from_seq + "–" + g.missing_to_seq + " cannot be replayed: " + g.message));
  }

  function prepend(li) {
    const feed = $("#feed");
    const empty = feed.querySelector("li.empty");
    if (empty) empty.remove();
    feed.prepend(li);
    while (feed.children.length > FEED_MAX) feed.lastElementChild.remove();
    applyFilter();
    $("#feed-count").textContent = state.received + " received" + (state.framework ? ", " + state.framework + " framework" : "");
  }

  // ---- lifecycle ----
  async function start(token) {
    state.token = token;
    state.started = true;
    setPill("#api-status", "idle", "admin API: …");
    try {
      const cfg = await api("api/config");
      state.wsToken = cfg.wsToken || "";
      $("#hub-url").textContent = cfg.hubURL;
    } catch (e) {
      if (e instanceof AuthError) { askToken(e.message); return; }
      setPill("#api-status", "bad", "admin API: " + e.message);
    }
    await refresh();
    if (!state.started) return;
    connect();
    state.pollTimer = setInterval(refresh, POLL_MS);
  }

  function stop() {
    state.started = false;
    clearInterval(state.pollTimer);
    if (state.ws) { const ws = state.ws; state.ws = null; ws.close(); }
    if (state.es) { const es = state.es; state.es = null; es.close(); }
    setPill("#ws-status", "idle", "feed: stopped");
  }

  window.addEventListener("resize", renderChart);
  window.addEventListener("hashchange", () => {
    if (!/(?:^#|&)token=/.test(location.hash)) return;
    const tok = takeTokenFromFragment();
    stop();
    $("#login").hidden = true;
    start(tok);
  });
  const tok = takeTokenFromFragment();
  if (tok) start(tok); else askToken("");
})();
