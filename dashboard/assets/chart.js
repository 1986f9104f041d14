// chart.js draws the throughput chart on a <canvas>: per-second counts,
// binned so that a bin is a few pixels wide, as a filled area in
// notifications per second, with a time axis in minutes ago.
"use strict";
window.rshubChart = (() => {
  // niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
  function niceMax(v) {
    if (v <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function fmt(v) {
    if (v >= 100) return v.toFixed(0);
    if (v >= 10) return v.toFixed(1).replace(/\.0$/, "");
    return v.toFixed(2).replace(/\.?0+$/, "") || "0";
  }

  // draw plots counts (one per second, oldest first).
  function draw(canvas, counts) {
    const dpr = window.devicePixelRatio || 1;
    const cssW = canvas.clientWidth || 600, cssH = canvas.clientHeight || 170;
    if (canvas.width !== Math.round(cssW * dpr) || canvas.height !== Math.round(cssH * dpr)) {
      canvas.width = Math.round(cssW * dpr);
      canvas.height = Math.round(cssH * dpr);
    }
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, cssW, cssH);
    const left = 44, right = 8, top = 8, bottom = 20;
    const w = cssW - left - right, h = cssH - top - bottom;
    const n = counts.length;
    if (n === 0 || w <= 0 || h <= 0) return;

    // Bins of a whole number of seconds, at least 3 px wide.
    const per = Math.max(1, Math.ceil(n / (w / 3)));
    const bins = [];
    for (let end = n; end > 0; end -= per) {
      const start = Math.max(0, end - per);
      let sum = 0;
      for (let i = start; i < end; i++) sum += counts[i];
      bins.unshift(sum / (end - start));
    }
    const peak = Math.max(...bins);
    const ymax = niceMax(peak * 1.1);

    const style = getComputedStyle(document.documentElement);
    const line = style.getPropertyValue("--line").trim() || "#e3e7ee";
    const muted = style.getPropertyValue("--muted").trim() || "#667085";
    const accent = style.getPropertyValue("--accent").trim() || "#2f6fdf";
    g.font = "11px system-ui, sans-serif";
    g.lineWidth = 1;

    // Horizontal grid and y labels.
    g.fillStyle = muted;
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (let k = 0; k <= 4; k++) {
      const v = ymax * k / 4, y = top + h - h * k / 4;
      g.strokeStyle = line;
      g.beginPath(); g.moveTo(left, Math.round(y) + .5); g.lineTo(left + w, Math.round(y) + .5); g.stroke();
      g.fillText(fmt(v) + "/s", left - 5, y);
    }
    // Time labels every few minutes.
    g.textAlign = "center";
    g.textBaseline = "top";
    const minutes = n / 60;
    const step = minutes > 10 ? 5 : minutes > 4 ? 2 : 1;
    for (let m = 0; m <= minutes; m += step) {
      const x = left + w - w * (m * 60) / n;
      g.fillText(m === 0 ? "now" : "−" + m + " min", Math.min(Math.max(x, left + 14), left + w - 12), top + h + 5);
    }

    // The area.
    const bw = w / bins.length;
    const yOf = v => top + h - h * v / ymax;
    g.beginPath();
    g.moveTo(left, top + h);
    bins.forEach((v, i) => { g.lineTo(left + i * bw, yOf(v)); g.lineTo(left + (i + 1) * bw, yOf(v)); });
    g.lineTo(left + w, top + h);
    g.closePath();
    g.fillStyle = accent + "33";
    g.fill();
    g.beginPath();
    bins.forEach((v, i) => {
      const x0 = left + i * bw, y = yOf(v);
      if (i === 0) g.moveTo(x0, y); else g.lineTo(x0, y);
      g.lineTo(x0 + bw, y);
    });
    g.strokeStyle = accent;
    g.lineWidth = 1.5;
    g.stroke();
    canvas.dataset.peak = String(peak);
    canvas.dataset.bins = String(bins.length);
  }

  return { draw, fmt };
})();
