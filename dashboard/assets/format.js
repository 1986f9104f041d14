// format.js holds the dashboard's time formatting: pure functions of the
// hub's RFC 3339 strings, shared by app.js and the dialogs.
"use strict";
window.rshubFormat = (() => {
  const isZeroTime = s => !s || s.startsWith("0001-01-01");
  function fmtTime(s) {
    if (isZeroTime(s)) return "—";
    return s.replace("T", " ").replace(/\.\d+/, "").replace(/(\+00:00|Z)$/, "Z");
  }
  // fmtWindow shows from → until, leaving out until's date when it is from's.
  function fmtWindow(from, until) {
    const f = fmtTime(from), u = fmtTime(until);
    if (f === "—") return u;
    if (f.slice(0, 10) === u.slice(0, 10)) return f + " → " + u.slice(11);
    return f + " → " + u;
  }
  function fmtAgo(s) {
    if (isZeroTime(s)) return "—";
    const d = (Date.now() - Date.parse(s)) / 1000;
    if (d < 0) return fmtIn(s);
    if (d < 60) return Math.round(d) + " s ago";
    if (d < 3600) return Math.round(d / 60) + " min ago";
    if (d < 86400) return Math.round(d / 3600) + " h ago";
    return Math.round(d / 86400) + " d ago";
  }
  function fmtIn(s) {
    const d = (Date.parse(s) - Date.now()) / 1000;
    if (d <= 0) return "ended";
    if (d < 3600) return "in " + Math.round(d / 60) + " min";
    if (d < 86400) return "in " + Math.round(d / 3600) + " h";
    return "in " + Math.round(d / 86400) + " d";
  }
  return { isZeroTime, fmtTime, fmtWindow, fmtAgo, fmtIn };
})();
