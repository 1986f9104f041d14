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
  const CHANNEL_PAGE = 100;    // channels per page

  const $ = sel => document.querySelector(sel);
  const state = {
    token: null, wsToken: "", started: false, pollTimer: 0, refreshing: false, again: false,
    channels: [], chQ: "", chPages: 1, chMore: false, summary: null, throughput: null,
    ws: null, es: null, transport: "websocket", wsOpened: false, wsRetry: 1000, lastSeq: 0, lastID: "", received: 0, framework: 0, live: false,
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
  // apiPage reads one page of a list: its items and the path of the next
  // page (null at the end): path with the cursor of the Link header's next
  // URL, so that it stays relative to the page behind a proxy's prefix.
  async function apiPage(path) {
    const res = await fetch(path, { cache: "no-store", headers: { Authorization: "Bearer " + state.token } });
    if (res.status === 401) throw new AuthError("the hub refused the admin token");
    if (!res.ok) throw new Error((await res.text()).trim() || res.status + " " + res.statusText);
    const m = (res.headers.get("Link") || "").match(/<([^>]*)>\s*;\s*rel="next"/);
    const items = (await res.json()) || [];
    if (!m) return { items, next: null };
    const [base, query] = path.split("?");
    const q = new URLSearchParams(query || "");
    q.set("cursor", new URL(m[1], location.href).searchParams.get("cursor") || "");
    return { items, next: base + "?" + q.toString() };
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

  // The subscriptions card (subs.js) gets what it needs from here.
  const subs = window.rshubSubs({
    $, el, api, apiPage, enc, toast, AuthError, refresh, fmtAgo, fmtIn, isZeroTime,
    onAuthError: e => askToken(e.message),
    openAttempts: sub => attempts.open(sub),
  });

  // The attempt log dialog (attempts.js), opened from a subscription.
  const attempts = window.rshubAttempts({
    $, el, api, apiPage, enc, AuthError, fmtTime, fmtAgo, fmtIn, isZeroTime,
    onAuthError: e => askToken(e.message), redriveButton: subs.redriveButton,
  });

  // refresh reads the summary, the channels and subscriptions shown and
  // the throughput, then renders; asked for while it runs, it runs again
  // after.
  async function refresh() {
    if (state.refreshing) { state.again = true; return; }
    state.refreshing = true;
    try {
      const [summary, , , throughput] = await Promise.all([
        api("../admin/summary"), loadChannels(), subs.load(), api("api/throughput"),
      ]);
      state.summary = summary;
      state.throughput = throughput;
      subs.setTotal(summary ? summary.subscriptions : null);
      setPill("#api-status", "ok", "admin API: ok");
      render();
    } catch (e) {
      if (e instanceof AuthError) { askToken(e.message); return; }
      setPill("#api-status", "bad", "admin API: " + e.message);
    } finally {
      state.refreshing = false;
    }
    if (state.again && state.started) { state.again = false; refresh(); }
  }

  // loadChannels reads state.chPages pages of channels (q: the search).
  async function loadChannels() {
    const list = [];
    let path = "../admin/channels?limit=" + CHANNEL_PAGE + (state.chQ ? "&q=" + enc(state.chQ) : "");
    for (let i = 0; path && i < state.chPages; i++) {
      const p = await apiPage(path);
      list.push(...p.items);
      path = p.next;
    }
    state.channels = list;
    state.chMore = !!path;
  }
  $("#channels-more").addEventListener("click", () => { state.chPages++; refresh(); });
  let chSearchTimer = 0;
  $("#channels-search").addEventListener("input", ev => {
    clearTimeout(chSearchTimer);
    chSearchTimer = setTimeout(() => { state.chQ = ev.target.value.trim(); state.chPages = 1; refresh(); }, 250);
  });

  // ---- rendering ----
  function render() {
    renderChart();
    renderSummary();
    renderChannels();
    subs.render();
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
    const rows = state.channels.map(c => {
      const st = c.state || {};
      const series = (state.throughput && state.throughput.channels[c.name]) || [];
      const rate = lastSeconds(series, 60) / 60;
      const gaps = st.gaps || [];
      const gapCell = gaps.length === 0 ? el("td", { class: "sub" }, "none") :
        el("td", { class: "gaps", title: gaps.map(g => fmtWindow(g.from, g.until) + " (before seq " + g.seq + ")").join("\n") },
          gaps.length + (gaps.length === 1 ? " gap: " : " gaps, last: ") + fmtWindow(gaps[gaps.length - 1].from, gaps[gaps.length - 1].until));
      return el("tr", { "data-channel": c.name },
        el("td", {}, el("div", { class: "chan" }, el("strong", {}, c.name)), el("div", { class: "sub trunc", title: c.topic }, c.topic)),
        el("td", {}, c.trust + (c.private ? " · private" : "")),
        el("td", { class: "num" }, String(st.published || 0)),
        el("td", { class: "num" }, window.rshubChart.fmt(rate) + "/s"),
        el("td", { class: "mono nowrap", title: st.lastUntil || "" }, fmtTime(st.lastUntil)),
        el("td", { class: "num" }, st.lastSeq ? String(st.lastSeq) : "—"),
        gapCell,
        el("td", {}, continuity.button(c, st)));
    });
    const empty = state.chQ ? "no channel matches “" + state.chQ + "”" : "no channels yet";
    body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: "8" }, empty))]));
    const n = state.channels.length, total = state.summary ? " of " + state.summary.channels : "";
    $("#channels-count").textContent = n + total + (n === 1 && !total ? " channel" : " channels") + (state.chQ ? " · matching “" + state.chQ + "”" : "");
    $("#channels-more").hidden = !state.chMore;
  }

  // renderSummary shows the hub's counts (GET /admin/summary).
  function renderSummary() {
    const s = state.summary;
    if (!s) return;
    const by = s.byStatus || {}, states = s.byState || {};
    const count = (key, n, label, bad) => el("div", { class: "count" + (bad && n ? " bad" : ""), "data-count": key }, el("strong", {}, String(n || 0)), el("span", {}, label));
    $("#summary").replaceChildren(
      count("subscriptions", s.subscriptions, "subscriptions"),
      count("active", by.active, "active"),
      count("pending", by.pending, "pending"),
      count("expired", by.expired, "expired"),
      count("channels", s.channels, "channels"),
      count("queues", s.queues, "queues on this hub"),
      count("failing", s.failing, "failing", true),
      count("circuit-open", states["circuit-open"], "circuit open", true),
      count("deadLetters", s.deadLetters, "dead letters", true));
    $("#summary-computed").textContent = "at " + fmtTime(s.computed);
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

  // startSeq is where a new session starts: after the last frame seen (its
  // id names the log's epoch, so a rebuilt log answers with a reset), or
  // REPLAY notifications back on page load.
  function startSeq() {
    if (state.lastID) return state.lastID;
    if (state.lastSeq !== 0) return state.lastSeq;
    const top = Math.max(0, ...state.channels.map(c => (c.state && c.state.lastSeq) || 0));
    return Math.max(0, top - REPLAY);
  }

  // onFrame handles a frame of either transport.
  function onFrame(f, via) {
    if (f.type === "notification") addNotification(f);
    else if (f.type === "gap") addGap(f);
    else if (f.type === "reset") resetFeed(f);
    else if (f.type === "live") {
      advance(f);
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
    for (const type of ["notification", "gap", "live", "reset"]) es.addEventListener(type, handle);
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

  // advance moves the cursor to a frame's seq and id, never back.
  function advance(f) {
    if (f.seq < state.lastSeq) return;
    state.lastSeq = f.seq;
    if (f.id) state.lastID = f.id;
  }

  // resetFeed answers the hub's reset: the cursor named no position of its
  // log (ahead of it, or from a log rebuilt since), so what the feed shows
  // is not this log's. It clears the feed and says so; the session goes on
  // from the log's first record.
  function resetFeed(r) {
    state.lastSeq = r.since;
    state.lastID = r.id;
    state.received = 0;
    state.framework = 0;
    $("#feed").replaceChildren();
    prepend(el("li", { class: "reset" }, "⟲ the hub's log was reset (log " + r.epoch + ", seq " + r.first_seq + "–" + r.last_seq +
      "): " + r.message + ". The feed was cleared and replays this log from its start."));
    toast("The hub's log was reset; the feed was cleared");
  }

  function addNotification(n) {
    advance(n);
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
