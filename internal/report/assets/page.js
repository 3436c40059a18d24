// cnperf report page: turns the charts the Go side laid out (CNPERF_CHARTS)
// into Chart.js configurations. It draws nothing by hand. After drawing,
// each <figure> gets data-points, the data elements Chart.js laid out, and
// data-drawn, the non-blank pixels of its canvas, which the page test
// reads; errors go to #js-errors. Opened as report.html#measure, it also
// writes what the page test checks of the layout: each figure's rendered
// width and place (data-width, data-top, data-bottom), the summary's place,
// the smallest text on the page (body data-min-font) and its colours
// (data-bg, data-fg).
(function () {
  "use strict";
  var errors = [];
  function report(msg) {
    errors.push(msg);
    var el = document.getElementById("js-errors");
    if (el) { el.textContent = errors.join("\n"); el.hidden = false; }
  }
  window.addEventListener("error", function (e) { report(String(e.message)); });

  var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  var fg = dark ? "#e6e6e6" : "#222", grid = dark ? "rgba(255,255,255,0.15)" : "rgba(0,0,0,0.1)";
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"];
  function color(i, alpha) {
    var c = palette[i % palette.length];
    if (alpha === undefined) return c;
    var n = parseInt(c.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }
  function num(v) {
    var a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toPrecision(3) + "M";
    if (a >= 1e4) return (v / 1e3).toPrecision(3) + "k";
    return String(+v.toPrecision(3));
  }
  function axis(title, log, extra) {
    var a = { type: log ? "logarithmic" : "linear", title: { display: !!title, text: title || "" } };
    a.ticks = {
      callback: function (v) {
        v = Number(v);
        if (log && this.max / this.min > 4) { // wide: 1, 2, 5 of each decade only
          var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
          if ([1, 2, 5].indexOf(Math.round(m * 1000) / 1000) < 0) return "";
        }
        return num(v);
      }
    };
    for (var k in extra) a[k] = extra[k];
    return a;
  }

  // intervalConfig: per series, the interval as a floating bar and the
  // median as a thick line across the same slot (a bar of its own with
  // the same stack, so several runs stand side by side).
  function intervalConfig(c) {
    var datasets = [];
    c.series.forEach(function (s, i) {
      var byCat = {};
      s.points.forEach(function (p) { byCat[p.cat] = p; });
      datasets.push({
        type: "bar", label: s.label + " " + (s.band || "95% interval"), stack: "s" + i, backgroundColor: color(i, 0.25),
        borderColor: color(i, 0.6), borderWidth: 1, grouped: true,
        data: c.labels.map(function (l) {
          var p = byCat[l];
          return p && p.lo !== undefined ? [p.lo, p.hi] : null;
        })
      });
      datasets.push({
        type: "bar", label: s.label, stack: "s" + i, backgroundColor: color(i), borderColor: color(i),
        borderWidth: { top: 3, bottom: 0, left: 0, right: 0 }, borderSkipped: false, minBarLength: 3,
        data: c.labels.map(function (l) { var p = byCat[l]; return p ? [p.y, p.y] : null; })
      });
    });
    if (c.ref !== undefined) {
      datasets.push({
        type: "line", label: c.ref_label, borderColor: fg, borderDash: [6, 4], borderWidth: 1.5,
        pointRadius: 0, data: c.labels.map(function () { return c.ref; })
      });
    }
    return {
      data: { labels: c.labels, datasets: datasets },
      options: { scales: { x: { type: "category" }, y: axis(c.ylabel, c.ylog, { beginAtZero: !c.ref && !c.ylog, stacked: false }) } }
    };
  }

  function linesConfig(c) {
    var cat = c.labels && c.labels.length > 0;
    var datasets = c.series.map(function (s, i) {
      return {
        type: "line", label: s.label, borderColor: color(i), backgroundColor: color(i),
        borderDash: s.dashed ? [6, 4] : [], pointRadius: 3, tension: 0, spanGaps: true,
        data: cat ? c.labels.map(function (l) {
          var p = s.points.find(function (p) { return p.cat === l; });
          return p ? p.y : null;
        }) : s.points.map(function (p) { return { x: p.x, y: p.y }; })
      };
    });
    var x = cat ? { type: "category", title: { display: !!c.xlabel, text: c.xlabel || "" } } : axis(c.xlabel, c.xlog);
    return {
      data: { labels: cat ? c.labels : undefined, datasets: datasets },
      options: { scales: { x: x, y: axis(c.ylabel, c.ylog) } }
    };
  }

  function stackedConfig(c) {
    var datasets = c.series.map(function (s, i) {
      return {
        type: "bar", label: s.label, backgroundColor: color(i, 0.8), borderColor: color(i), borderWidth: 1,
        data: c.labels.map(function (l) {
          var p = s.points.find(function (p) { return p.cat === l; });
          return p ? p.y : null;
        })
      };
    });
    return {
      data: { labels: c.labels, datasets: datasets },
      options: { scales: { x: { stacked: true }, y: axis(c.ylabel, false, { stacked: true }) } }
    };
  }

  // barsConfig: categories; one bar per series side by side.
  function barsConfig(c) {
    var datasets = c.series.map(function (s, i) {
      return {
        type: "bar", label: s.label, backgroundColor: color(i, 0.8), borderColor: color(i), borderWidth: 1,
        data: c.labels.map(function (l) {
          var p = s.points.find(function (p) { return p.cat === l; });
          return p ? p.y : null;
        })
      };
    });
    if (c.ref !== undefined) {
      datasets.push({
        type: "line", label: c.ref_label, borderColor: fg, borderDash: [6, 4], borderWidth: 1.5,
        pointRadius: 0, data: c.labels.map(function () { return c.ref; })
      });
    }
    return {
      data: { labels: c.labels, datasets: datasets },
      options: { scales: { x: { type: "category" }, y: axis(c.ylabel, c.ylog, { beginAtZero: !c.ylog }) } }
    };
  }

  var kinds = { interval: intervalConfig, lines: linesConfig, stacked: stackedConfig, bars: barsConfig };

  // inked counts the canvas pixels that are not blank.
  function inked(canvas) {
    var ctx = canvas.getContext("2d");
    var d = ctx.getImageData(0, 0, canvas.width, canvas.height).data, n = 0;
    for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
    return n;
  }

  function draw() {
    if (typeof Chart === "undefined") { report("Chart.js did not load"); return; }
    Chart.defaults.animation = false;
    Chart.defaults.responsive = true;
    Chart.defaults.maintainAspectRatio = false;
    Chart.defaults.font.size = 13;
    Chart.defaults.color = fg;
    Chart.defaults.borderColor = grid;
    var charts = [];
    (window.CNPERF_CHARTS || []).forEach(function (c) {
      var fig = document.getElementById(c.id);
      if (!fig) { report("no figure for chart " + c.id); return; }
      try {
        var cfg = kinds[c.kind](c);
        cfg.options.plugins = {
          title: { display: true, text: c.title, font: { size: 15, weight: "bold" } },
          legend: { position: "bottom" },
          tooltip: { mode: "nearest", intersect: false }
        };
        var canvas = fig.querySelector("canvas");
        var ch = new Chart(canvas, cfg);
        charts.push(ch);
        var points = 0;
        ch.data.datasets.forEach(function (d, i) {
          ch.getDatasetMeta(i).data.forEach(function (el, j) {
            var v = d.data[j];
            if (v !== null && v !== undefined && !el.skip) points++;
          });
        });
        fig.setAttribute("data-points", String(points));
        fig.setAttribute("data-drawn", String(inked(canvas)));
      } catch (e) {
        report("chart " + c.id + ": " + e);
      }
    });
    // paper is narrower than the screen: fit the charts to it
    window.addEventListener("beforeprint", function () { charts.forEach(function (ch) { ch.resize(); }); });
    window.addEventListener("afterprint", function () { charts.forEach(function (ch) { ch.resize(); }); });
    if (location.hash === "#measure") measure();
    document.body.setAttribute("data-charts-done", String((window.CNPERF_CHARTS || []).length));
  }

  function measure() {
    function place(el) {
      var r = el.getBoundingClientRect();
      el.setAttribute("data-width", String(Math.round(r.width)));
      el.setAttribute("data-top", String(Math.round(r.top + window.scrollY)));
      el.setAttribute("data-bottom", String(Math.round(r.bottom + window.scrollY)));
    }
    document.querySelectorAll("figure.chart canvas, #answer").forEach(place);
    document.querySelectorAll("figure.chart").forEach(function (fig) {
      var c = fig.querySelector("canvas");
      ["width", "top", "bottom"].forEach(function (a) { fig.setAttribute("data-" + a, c.getAttribute("data-" + a)); });
    });
    var least = 1000;
    document.querySelectorAll("body *").forEach(function (el) {
      if (el.offsetParent === null && el.tagName !== "BODY") return; // not shown
      for (var n = el.firstChild; n; n = n.nextSibling) {
        if (n.nodeType === 3 && n.textContent.trim() !== "") {
          least = Math.min(least, parseFloat(getComputedStyle(el).fontSize));
          break;
        }
      }
    });
    document.body.setAttribute("data-min-font", String(least));
    document.body.setAttribute("data-bg", getComputedStyle(document.body).backgroundColor);
    document.body.setAttribute("data-fg", getComputedStyle(document.body).color);
    document.body.setAttribute("data-viewport", window.innerWidth + "x" + window.innerHeight);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw);
  else draw();
})();
