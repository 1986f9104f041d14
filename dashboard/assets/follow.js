// follow.js is the dashboard's card for followed Sources: the channels the
// hub follows itself (it polls their pull-mode documents and publishes what
// is new), each with its Source, plan, polls, bytes fetched, errors, the
// leniencies recorded in lenient mode and the hub that follows it (GET
// /admin/follow: the status from the store, the same on every hub of a
// cluster; "claim expired" when that hub stopped and none took over yet),
// a "Poll now" button (POST /admin/channels/{name}/follow/poll) and a form
// that adds a followed channel (POST /admin/channels). It reads the admin
// token app.js keeps in sessionStorage. Every value from the hub is put in
// the page as text, never as HTML.
"use strict";
(() => {
  const TOKEN_KEY = "rshub.adminToken"; // as app.js keeps it
  const card = document.getElementById("follow-card");
  if (!card) return;

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }

  async function api(path, method, body) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (!token) throw new Error("no admin token");
    const opts = { method: method || "GET", cache: "no-store", headers: { Authorization: "Bearer " + token } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const r = await fetch(path, opts);
    const text = await r.text();
    if (!r.ok) throw new Error(text.trim() || r.status + " " + r.statusText);
    return text ? JSON.parse(text) : null;
  }

  const fmtTime = window.rshubFormat.fmtAgo; // "12 s ago", "in 3 min"

  function fmtBytes(n) {
    if (n < 1024) return n + " B";
    if (n < 1 << 20) return (n / 1024).toFixed(1) + " KiB";
    return (n / (1 << 20)).toFixed(1) + " MiB";
  }

  const table = el("table", { id: "follows" },
    el("thead", {}, el("tr", {},
      el("th", {}, "channel"), el("th", {}, "Source"), el("th", {}, "mode"), el("th", { class: "num" }, "polls"),
      el("th", { class: "num" }, "304"), el("th", { class: "num" }, "fetched"), el("th", { class: "num" }, "errors"),
      el("th", {}, "last poll"), el("th", {}, "leniencies"), el("th", {}, ""))),
    el("tbody", {}, el("tr", { class: "empty" }, el("td", { colspan: "10" }, "loading…"))));
  const msg = el("p", { class: "error", hidden: "" });
  const form = el("form", { id: "follow-form" },
    el("input", { id: "follow-name", type: "text", placeholder: "channel name", required: "", autocomplete: "off" }),
    el("input", { id: "follow-url", type: "url", class: "mono", placeholder: "Source URL (Source Description, Capability List or Change List)", required: "", autocomplete: "off" }),
    el("input", { id: "follow-interval", type: "text", placeholder: "poll interval (1m)", autocomplete: "off" }),
    el("select", { id: "follow-validation" }, el("option", { value: "strict" }, "strict"), el("option", { value: "lenient" }, "lenient")),
    el("label", { title: "served only to subscriber tokens covering the channel's topic" }, el("input", { id: "follow-private", type: "checkbox" }), " private"),
    el("button", { type: "submit" }, "Follow"));
  card.append(el("h2", {}, "Followed Sources ", el("small", { id: "follow-count" })), table, form, msg);

  function showError(text) {
    msg.textContent = text || "";
    if (text) msg.removeAttribute("hidden"); else msg.setAttribute("hidden", "");
  }

  function row(s) {
    const len = (s.leniencies || []).map(l => l.rule + " ×" + l.count);
    const lenCell = el("td", { class: len.length ? "warn" : "" }, len.length ? len.join(", ") : "none");
    if (len.length) lenCell.title = (s.leniencies || []).map(l => l.rule + ": " + l.msg).join("\n");
    const err = el("td", { class: "num" }, String(s.errors) + (s.gaps ? " · " + s.gaps + " gap" + (s.gaps > 1 ? "s" : "") : ""));
    const why = [s.lastError, s.lastGap && "last gap " + s.lastGap.from + " – " + s.lastGap.until].filter(Boolean);
    if (why.length) { err.title = why.join("\n"); err.className = "num warn"; }
    const last = el("td", { class: s.expired ? "warn" : "" },
      fmtTime(s.lastPoll) + (s.owner ? " · " + s.owner : "") + (s.expired ? " (claim expired)" : ""));
    if (s.owner) last.title = "status written by " + s.owner + " " + fmtTime(s.updated) + "; its claim " + (s.expired ? "expired " : "lasts until ") + fmtTime(s.claimExpires);
    const poll = el("button", { type: "button", class: "secondary" }, "Poll now");
    poll.addEventListener("click", async () => {
      try { await api("../admin/channels/" + encodeURIComponent(s.channel) + "/follow/poll", "POST"); showError(""); setTimeout(refresh, 300); }
      catch (e) { showError(e.message); }
    });
    const src = el("td", { class: "mono" }, s.source);
    src.title = [s.plan.index && "index " + s.plan.index, s.plan.archive && "archive " + s.plan.archive, s.plan.changeList && "change list " + s.plan.changeList, s.plan.resourceList && "resource list " + s.plan.resourceList].filter(Boolean).join("\n");
    return el("tr", { "data-channel": s.channel },
      el("td", {}, s.channel), src, el("td", {}, s.validation + " / " + s.interval),
      el("td", { class: "num" }, String(s.polls)), el("td", { class: "num" }, String(s.notModified)),
      el("td", { class: "num" }, fmtBytes(s.bytes)), err, last, lenCell, el("td", {}, poll));
  }

  async function refresh() {
    let list;
    try { list = await api("../admin/follow"); } catch (e) { return; }
    const body = table.tBodies[0];
    body.replaceChildren(...(list.length ? list.map(row) : [el("tr", { class: "empty" }, el("td", { colspan: "10" }, "no followed Source"))]));
    document.getElementById("follow-count").textContent = list.length ? String(list.length) : "";
  }

  form.addEventListener("submit", async ev => {
    ev.preventDefault();
    const ch = { name: document.getElementById("follow-name").value.trim(), follow: document.getElementById("follow-url").value.trim(),
      validation: document.getElementById("follow-validation").value };
    const iv = document.getElementById("follow-interval").value.trim();
    if (iv) ch.pollInterval = iv;
    if (document.getElementById("follow-private").checked) ch.private = true;
    try { await api("../admin/channels", "POST", ch); form.reset(); showError(""); setTimeout(refresh, 300); }
    catch (e) { showError(e.message); }
  });

  refresh();
  setInterval(refresh, 3000);
})();
