// continuity.js is the dashboard's continuity dialog. A channel's anchor
// is the until its next notification is checked against (one that
// overlaps it or comes before it is refused with 409); the dialog shows it
// with the channel's gaps and resets, and resets it after a confirmation
// (POST /admin/channels/{name}/continuity/reset). Every value from the hub
// is put in the page as text, never as HTML.
"use strict";
window.rshubContinuity = deps => {
  const { $, el, api, enc, toast, refresh, AuthError, fmtTime, fmtWindow, fmtAgo, isZeroTime, onAuthError } = deps;
  const cont = { channel: null, view: null, busy: false };

  function continuityButton(c, st) {
    const resets = st.resets || [];
    const last = resets[resets.length - 1];
    const title = "show and reset the continuity anchor" + (last ? "\nlast reset " + fmtAgo(last.at) : "");
    const b = el("button", { class: "continuity", type: "button", title: title }, "Anchor…");
    b.addEventListener("click", () => openContinuity(c.name));
    return b;
  }

  function showContError(msg) {
    const e = $("#cont-error");
    e.textContent = msg;
    e.hidden = !msg;
  }

  async function openContinuity(name) {
    cont.channel = name;
    cont.view = null;
    $("#cont-channel").textContent = name;
    for (const id of ["#cont-anchor", "#cont-seq", "#cont-published", "#cont-gaps", "#cont-last-reset"]) $(id).textContent = "…";
    $("#cont-until").value = "";
    $("#cont-confirm").hidden = true;
    showContError("");
    const dlg = $("#continuity");
    dlg.dataset.channel = name;
    dlg.dataset.loaded = "";
    dlg.hidden = false;
    try {
      const v = await api("../admin/channels/" + enc(name) + "/continuity");
      if (cont.channel !== name) return;
      cont.view = v;
      renderContinuity();
    } catch (e) {
      if (e instanceof AuthError) { closeContinuity(); onAuthError(e); return; }
      showContError(e.message);
    }
  }

  function closeContinuity() {
    cont.channel = null;
    cont.view = null;
    $("#continuity").hidden = true;
  }

  function renderContinuity() {
    const v = cont.view;
    $("#cont-anchor").textContent = v.anchored ? fmtTime(v.lastUntil) : "none: the next notification is taken as the first";
    $("#cont-anchor").title = v.anchored ? v.lastUntil : "";
    $("#cont-seq").textContent = v.lastSeq ? String(v.lastSeq) : "—";
    $("#cont-published").textContent = String(v.published || 0);
    const gaps = v.gaps || [];
    const g = gaps[gaps.length - 1];
    $("#cont-gaps").textContent = g ? gaps.length + ", last: " + fmtWindow(g.from, g.until) : "none";
    const resets = v.resets || [];
    const r = resets[resets.length - 1];
    const anchorText = t => isZeroTime(t) ? "none" : fmtTime(t);
    $("#cont-last-reset").textContent = r ? fmtAgo(r.at) + ": " + anchorText(r.prevUntil) + " → " + anchorText(r.until) + " (at seq " + r.seq + ")" : "never";
    $("#continuity").dataset.loaded = "true";
  }

  $("#cont-form").addEventListener("submit", ev => {
    ev.preventDefault();
    if (!cont.view || cont.busy) return;
    const until = $("#cont-until").value.trim();
    if (until && (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(until) || isNaN(Date.parse(until)))) {
      showContError("“" + until + "” is not an RFC 3339 time such as 2025-03-14T09:10:00Z");
      return;
    }
    showContError("");
    const from = cont.view.anchored ? fmtTime(cont.view.lastUntil) : "none";
    $("#cont-confirm-text").textContent = "Reset the anchor of " + cont.channel + " from " + from + " to " + (until || "none") + "? " +
      (until ? "The next notification must start at " + until + "." : "The next notification will be accepted as the first, whatever its from.");
    $("#cont-confirm").hidden = false;
    $("#cont-confirm-button").focus();
  });

  $("#cont-confirm-button").addEventListener("click", async () => {
    if (cont.busy || !cont.channel) return;
    const name = cont.channel;
    const until = $("#cont-until").value.trim();
    const b = $("#cont-confirm-button");
    cont.busy = true;
    b.disabled = true;
    b.textContent = "Resetting…";
    try {
      const v = await api("../admin/channels/" + enc(name) + "/continuity/reset", "POST", until ? { until: until } : {});
      $("#cont-confirm").hidden = true;
      if (cont.channel === name) {
        cont.view = v;
        renderContinuity();
        $("#cont-until").value = "";
      }
      toast(v.anchored ? "Continuity anchor of " + name + " set to " + fmtTime(v.lastUntil) : "Continuity anchor of " + name + " cleared");
    } catch (e) {
      if (e instanceof AuthError) { closeContinuity(); onAuthError(e); return; }
      $("#cont-confirm").hidden = true;
      showContError("Reset failed: " + e.message);
    } finally {
      cont.busy = false;
      b.disabled = false;
      b.textContent = "Confirm reset";
    }
    refresh();
  });
  $("#cont-cancel").addEventListener("click", () => { $("#cont-confirm").hidden = true; });
  $("#cont-close").addEventListener("click", closeContinuity);
  document.addEventListener("keydown", ev => {
    if (ev.key === "Escape" && !$("#continuity").hidden) closeContinuity();
  });

  return { button: continuityButton };
};
