// attempts.js is the dashboard's attempt log dialog: an operator finds a
// subscription in the subscriptions card (its search box), opens its
// attempts and sees why deliveries fail — each attempt's status, latency,
// error, the callback's kept response headers and body start, and when the
// next attempt comes (GET /admin/subscriptions/{id}/attempts, newest
// first, paged, with a status filter) — and redrives its dead letters from
// the same dialog. It reads the log again every few seconds while open.
// Every value from the hub is put in the page as text, never as HTML.
"use strict";
window.rshubAttempts = deps => {
  const { $, el, api, apiPage, enc, AuthError, onAuthError, redriveButton, fmtTime, fmtAgo, fmtIn, isZeroTime } = deps;
  const PAGE = 25;          // attempts per page
  const POLL_MS = 3000;     // while open
  const st = { sub: null, status: "", pages: 1, items: [], next: null, dead: [], timer: 0, loading: false, again: false, shown: {} };

  function showError(msg) {
    const e = $("#att-error");
    e.textContent = msg;
    e.hidden = !msg;
  }

  // open shows the attempts of sub (a subscription as the admin API lists it).
  function open(sub) {
    st.sub = sub;
    st.status = "";
    st.pages = 1;
    st.items = [];
    st.dead = [];
    $("#att-status").value = "";
    $("#att-callback").textContent = sub.callback;
    $("#att-callback").title = sub.callback;
    $("#att-sub-id").textContent = sub.id;
    const dlg = $("#attempts");
    dlg.dataset.subId = sub.id;
    dlg.dataset.loaded = "";
    dlg.hidden = false;
    showError("");
    render();
    clearInterval(st.timer);
    st.timer = setInterval(load, POLL_MS);
    load();
  }

  function close() {
    st.sub = null;
    st.shown = {};
    clearInterval(st.timer);
    $("#attempts").hidden = true;
  }

  // load reads st.pages pages of the log (with the status filter) and the
  // dead letters; asked for while it runs, it runs again after.
  async function load() {
    if (!st.sub) return;
    if (st.loading) { st.again = true; return; }
    st.loading = true;
    const sub = st.sub, want = st.status + "/" + st.pages;
    try {
      const items = [];
      let path = "../admin/subscriptions/" + enc(sub.id) + "/attempts?limit=" + PAGE + (st.status ? "&status=" + enc(st.status) : "");
      for (let i = 0; path && i < st.pages; i++) {
        const p = await apiPage(path);
        items.push(...p.items);
        path = p.next;
      }
      const dead = await api("../admin/subscriptions/" + enc(sub.id) + "/deadletters");
      if (st.sub !== sub || want !== st.status + "/" + st.pages) return;
      st.items = items;
      st.next = path;
      st.dead = dead || [];
      showError("");
      render();
      $("#attempts").dataset.loaded = "1";
    } catch (e) {
      if (e instanceof AuthError) { close(); onAuthError(e); return; }
      showError(e.message);
    } finally {
      st.loading = false;
    }
    if (st.again) { st.again = false; load(); }
  }

  const ok = a => a.status >= 200 && a.status < 300;
  // fmtNext shows when the next attempt comes (seconds count here), or
  // came: its time of day.
  function fmtNext(s) {
    if (isZeroTime(s)) return "—";
    const d = (Date.parse(s) - Date.now()) / 1000;
    if (d <= 0) return fmtTime(s).slice(11);
    return d < 60 ? "in " + Math.ceil(d) + " s" : fmtIn(s);
  }
  const statusText = a => a.status ? "HTTP " + a.status : "no response";

  // why says in a line how the subscription's deliveries go, from the
  // newest attempt listed.
  function why() {
    const a = st.items[0];
    if (!a) return st.status ? "no attempt with this status in the log" : "no attempt recorded yet";
    if (ok(a)) return "Delivering: the last attempt (seq " + a.seq + ", " + fmtAgo(a.time) + ") got " + statusText(a) + ".";
    const parts = ["Failing: " + (a.error || statusText(a))];
    const h = a.headers || {};
    if (h["Retry-After"]) parts.push("the callback asks to retry after " + h["Retry-After"]);
    const body = (a.body || "").trim();
    if (body) parts.push("it answered “" + body.slice(0, 160) + (body.length > 160 ? "…" : "") + "”");
    parts.push(isZeroTime(a.nextRetry) ? "no retry: given up or dead-lettered" : "next attempt " + fmtNext(a.nextRetry));
    return parts.join(" · ");
  }

  function detail(a) {
    const h = a.headers || {};
    const names = Object.keys(h).sort();
    if (!names.length && !a.body) return null;
    return el("details", { class: "att-detail" }, el("summary", {}, "response"),
      names.length ? el("dl", {}, names.flatMap(n => [el("dt", {}, n), el("dd", { class: "mono" }, h[n])])) : null,
      a.body ? el("pre", { class: "mono" }, a.body) : null);
  }

  function render() {
    const why1 = $("#att-why");
    why1.textContent = why();
    why1.className = "why " + (st.items[0] && !ok(st.items[0]) ? "bad-text" : "");
    $("#att-more").hidden = !st.next;
    // Rows and dead letters are built again only when they changed, so
    // that polling neither folds a response the operator opened nor moves
    // a button from under the pointer.
    const sig = {
      rows: st.sub && st.sub.id + "|" + st.status + "|" + st.items.map(a => a.time + "/" + a.seq + "/" + a.attempt).join(),
      dead: st.sub && st.sub.id + "|" + st.dead.map(d => d.id + "/" + d.attempts + "/" + d.failed).join(),
    };
    if (sig.rows !== st.shown.rows) renderRows();
    if (sig.dead !== st.shown.dead) renderDead();
    st.shown = sig;
  }

  function renderRows() {
    const rows = st.items.map(a => el("tr", { "data-seq": String(a.seq), "data-status": String(a.status), class: ok(a) ? "ok" : "failed" },
      el("td", { title: a.time }, fmtAgo(a.time)),
      el("td", { class: "num" }, String(a.seq)),
      el("td", { class: "num" }, String(a.attempt)),
      el("td", {}, el("span", { class: "pill " + (ok(a) ? "ok" : "bad") }, statusText(a))),
      el("td", { class: "num" }, a.latencyMs.toFixed(1)),
      el("td", { class: "att-why" }, a.error ? el("div", { class: "reason" }, a.error) : null, detail(a)),
      el("td", { title: isZeroTime(a.nextRetry) ? "" : a.nextRetry }, fmtNext(a.nextRetry))));
    const empty = el("tr", {}, el("td", { class: "empty", colspan: "7" }, st.status ? "no " + st.status + " attempt in the log" : "no attempt recorded yet"));
    $("#att-table tbody").replaceChildren(...(rows.length ? rows : [empty]));
  }

  function renderDead() {
    const dead = st.dead.map(d => el("div", { class: "dl", "data-dl-id": d.id, "data-seq": String(d.seq) },
      el("span", {}, "seq " + d.seq),
      el("span", { class: "bad-text" }, d.lastStatus ? "HTTP " + d.lastStatus : "error"),
      el("span", { class: "reason", title: d.reason }, d.attempts + " attempts · " + fmtAgo(d.failed) + " · " + d.reason),
      redriveButton(st.sub, d, load)));
    $("#att-dead").replaceChildren(...(dead.length ? dead : [el("p", { class: "sub" }, "no dead letters")]));
  }

  $("#att-status").addEventListener("change", ev => { st.status = ev.target.value; st.pages = 1; load(); });
  $("#att-more").addEventListener("click", () => { st.pages++; load(); });
  $("#att-reload").addEventListener("click", () => load());
  $("#att-close").addEventListener("click", close);
  document.addEventListener("keydown", ev => { if (ev.key === "Escape" && st.sub) close(); });

  return { open };
};
