// subs.js is the dashboard's subscriptions card, paged for hubs with many:
// the failing subscriptions first (GET /admin/subscriptions?status=failing),
// then pages of all of them in the admin API's order, one page at first and
// one more per "Load more" click, each a request that follows the list's
// next link; a search box narrows both (q=). Every subscription shows its
// delivery health as the admin API embeds it, and its dead letters with a
// redrive button each. Every value from the hub is put in the page as
// text, never as HTML.
"use strict";
window.rshubSubs = deps => {
  const { $, el, api, apiPage, enc, toast, AuthError, onAuthError, refresh, fmtAgo, fmtIn, isZeroTime, openAttempts } = deps;
  const PAGE = 100;         // subscriptions per page
  const FAILING_MAX = 100;  // failing subscriptions shown first
  const MAX_REQUESTS = 25;  // list requests per refresh (a search reads a bounded slice per request)
  const DL_SUBS_MAX = 50;   // subscriptions whose dead letters are read per refresh
  const SEARCH_EVERY_MS = 15000; // a search's list is read again at most this often by polling

  // st.dirty: the search or the number of pages changed since the last load.

  const st = { q: "", pages: 1, failing: [], list: [], more: false, deadLetters: {}, redriving: new Set(), total: null, dirty: true, loadedAt: 0 };

  // load reads the failing subscriptions and st.pages pages of all of
  // them: a page is full (PAGE items) or the list's end; a filtered page
  // may take several requests, each reading a bounded slice of the hub, so
  // polling reads a search's list again only every SEARCH_EVERY_MS.
  async function load() {
    const q = st.q ? "&q=" + enc(st.q) : "";
    const failing = await apiPage("../admin/subscriptions?status=failing&limit=" + FAILING_MAX + q);
    if (st.q && !st.dirty && Date.now() - st.loadedAt < SEARCH_EVERY_MS) {
      st.failing = failing.items;
      await loadDeadLetters();
      return;
    }
    const want = { q: st.q, pages: st.pages };
    st.dirty = false;
    const list = [];
    let path = "../admin/subscriptions?limit=" + PAGE + q;
    for (let requests = 0; path && requests < MAX_REQUESTS && list.length < st.pages * PAGE; requests++) {
      const p = await apiPage(path);
      list.push(...p.items);
      path = p.next;
    }
    st.failing = failing.items;
    st.list = list;
    st.more = !!path;
    st.loadedAt = Date.now();
    if (want.q !== st.q || want.pages !== st.pages) st.dirty = true; // changed meanwhile
    await loadDeadLetters();
  }

  // loadDeadLetters reads the dead letters of the shown subscriptions that
  // have some (or had some at the last refresh).
  async function loadDeadLetters() {
    const ids = shown()
      .filter(s => (s.delivery && s.delivery.deadLetters > 0) || (st.deadLetters[s.id] || []).length > 0)
      .slice(0, DL_SUBS_MAX).map(s => s.id);
    const lists = await Promise.all(ids.map(id => api("../admin/subscriptions/" + enc(id) + "/deadletters").catch(e => {
      if (e instanceof AuthError) throw e;
      return [];
    })));
    const next = {};
    ids.forEach((id, i) => { next[id] = lists[i] || []; });
    st.deadLetters = next;
  }

  // shown returns the failing subscriptions, then the others of the pages
  // read, each once.
  function shown() {
    const seen = new Set(st.failing.map(s => s.id));
    return st.failing.map(s => Object.assign({ failingFirst: true }, s)).concat(st.list.filter(s => !seen.has(s.id)));
  }

  // subState combines the subscription's lifecycle (pending, active,
  // expired) with the delivery engine's health (active, failing, …).
  function subState(sub) {
    const expired = sub.state === "expired" || (!isZeroTime(sub.expires) && Date.parse(sub.expires) < Date.now());
    if (sub.state === "pending") return "pending";
    if (expired) return "expired";
    if (!sub.delivery) return sub.state === "active" ? "idle" : sub.state;
    return sub.delivery.state;
  }
  const stateClass = { active: "ok", pending: "idle", idle: "idle", starting: "idle", standby: "idle", failing: "bad", stalled: "bad", "circuit-open": "bad", expired: "warn", stopped: "warn" };

  function render() {
    const rows = [];
    const subs = shown();
    for (const s of subs) {
      const d = s.delivery;
      const ss = subState(s);
      const dls = st.deadLetters[s.id] || [];
      const nDL = Math.max(dls.length, d ? d.deadLetters : 0);
      let last = el("td", { class: "sub" }, "—");
      if (d && !isZeroTime(d.lastAttempt)) {
        const ok = d.lastStatus >= 200 && d.lastStatus < 300;
        last = el("td", { title: d.lastError || "" },
          el("span", { class: ok ? "" : "bad-text" }, d.lastStatus ? "HTTP " + d.lastStatus : "error"),
          el("div", { class: "sub" }, fmtAgo(d.lastAttempt) + (d.consecutiveFailures ? " · " + d.consecutiveFailures + " failures in a row" : "")));
      }
      rows.push(el("tr", { "data-sub-id": s.id, "data-state": ss, class: s.failingFirst ? "failing-first" : null },
        el("td", {}, el("div", { class: "mono trunc", title: s.callback }, s.callback), el("div", { class: "sub mono" }, s.id.slice(0, 12), attemptsButton(s))),
        el("td", {}, s.channel || el("span", { class: "sub", title: s.topic }, "(topic)")),
        el("td", {}, el("span", { class: "pill state " + (stateClass[ss] || "idle") }, ss), circuitNote(d)),
        last,
        el("td", { class: "num" }, d ? String(d.backlog) : "—"),
        el("td", { class: "num" + (nDL ? " bad-text" : "") }, String(nDL)),
        el("td", { title: s.expires || "" }, isZeroTime(s.expires) ? "—" : fmtIn(s.expires))));
      if (dls.length) rows.push(deadLetterRow(s, dls));
    }
    const empty = st.q ? "no subscription matches “" + st.q + "”" : "no subscriptions yet";
    $("#subs tbody").replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { class: "empty", colspan: "7" }, empty))]));
    const total = st.total === null ? "" : " of " + st.total;
    $("#subs-count").textContent = subs.length + total + (subs.length === 1 && !total ? " subscription" : " subscriptions") +
      (st.failing.length ? " · " + st.failing.length + " failing first" : "") + (st.q ? " · matching “" + st.q + "”" : "");
    $("#subs-more").hidden = !st.more;
  }

  // circuitNote names the open circuit holding a subscription back: its
  // callback's (its own failed answers) or its host's (the host refuses
  // or is overloaded), and when the next probe may go.
  function circuitNote(d) {
    if (!d) return null;
    const cb = d.callbackBreaker || {};
    if (cb.state && cb.state !== "closed") {
      const when = cb.openUntil ? " · probe " + fmtIn(cb.openUntil) : "";
      return el("div", { class: "sub circuit", "data-circuit": "callback", title: cb.consecutiveFailures + " failures in a row (opens at " + cb.failures + ")" }, "callback circuit " + cb.state + when);
    }
    if (d.hostBreaker && d.hostBreaker !== "closed") {
      return el("div", { class: "sub circuit", "data-circuit": "host", title: "the host " + d.host + " refuses connections or several of its callbacks are overloaded" }, "host circuit " + d.hostBreaker);
    }
    return null;
  }

  function deadLetterRow(sub, dls) {
    const items = dls.map(d => el("div", { class: "dl", "data-dl-id": d.id, "data-seq": String(d.seq) },
      el("span", {}, "seq " + d.seq),
      el("span", { class: "bad-text" }, d.lastStatus ? "HTTP " + d.lastStatus : "error"),
      el("span", { class: "reason", title: d.reason }, d.attempts + " attempts · " + fmtAgo(d.failed) + " · " + d.reason),
      redriveButton(sub, d)));
    return el("tr", { class: "deadletters", "data-sub-id": sub.id }, el("td", { colspan: "7" }, items));
  }

  // attemptsButton opens the subscription's attempt log (attempts.js).
  function attemptsButton(sub) {
    const b = el("button", { class: "attempts", type: "button", title: "recent delivery attempts: why it fails, redrive" }, "Attempts…");
    b.addEventListener("click", () => openAttempts(sub));
    return b;
  }

  // redriveButton redrives dead letter d of sub, then refreshes the page
  // and calls after, when given.
  function redriveButton(sub, d, after) {
    const key = sub.id + "/" + d.id;
    const busy = st.redriving.has(key);
    const b = el("button", { class: "redrive", type: "button", title: "deliver seq " + d.seq + " to the callback again", disabled: busy }, busy ? "Redriving…" : "Redrive");
    b.addEventListener("click", async () => {
      if (st.redriving.has(key)) return;
      st.redriving.add(key);
      b.disabled = true;
      b.textContent = "Redriving…";
      try {
        await api("../admin/subscriptions/" + enc(sub.id) + "/deadletters/" + enc(d.id) + "/redrive", "POST");
        toast("Delivered seq " + d.seq + " to " + sub.callback);
      } catch (e) {
        if (e instanceof AuthError) { onAuthError(e); return; }
        toast("Redrive of seq " + d.seq + " failed: " + e.message, true);
      } finally {
        st.redriving.delete(key);
      }
      refresh();
      if (after) after();
    });
    return b;
  }

  $("#subs-more").addEventListener("click", () => { st.pages++; st.dirty = true; refresh(); });
  let searchTimer = 0;
  $("#subs-search").addEventListener("input", ev => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      st.q = ev.target.value.trim();
      st.pages = 1;
      st.dirty = true;
      refresh();
    }, 250);
  });

  return {
    load, render, redriveButton,
    // setTotal takes the number of subscriptions from the summary.
    setTotal(n) { st.total = n; },
  };
};
