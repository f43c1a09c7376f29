/* paperatlas map: draws map_data() with regl-scatterplot (WebGL).
 * Paper text is only ever set through textContent, never parsed as HTML. */
(function () {
  "use strict";

  var root = document.getElementById("atlas");
  var $ = function (id) { return document.getElementById(id); };

  // UI strings in the page's language (map.py embeds the translations of MAP_MESSAGES)
  var strings = {};
  try { strings = JSON.parse(($("atlas-i18n") || {}).textContent || "{}"); } catch (e) { /* English */ }
  function _(s, params) {
    var t = strings[s] || s;
    return params ? t.replace(/\{(\w+)\}/g, function (m, k) { return k in params ? String(params[k]) : m; }) : t;
  }

  function message(text) {
    var m = $("atlas-msg");
    m.textContent = text;
    m.hidden = !text;
  }

  function loadData() {
    var el = document.getElementById("atlas-data");
    if (el) return Promise.resolve(JSON.parse(el.textContent));
    return fetch(root.getAttribute("data-src"), { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) return r.json().then(function (e) { throw new Error((e && e.error) || ("HTTP " + r.status)); });
      return r.json();
    });
  }

  // -- colours: a qualitative palette for topics; subtopics vary their parent's colour ----
  var BASE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#79706e", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
    "#756bb1", "#636363", "#6baed6", "#fd8d3c", "#74c476", "#9e9ac8", "#969696", "#9ecae1", "#fdae6b",
    "#a1d99b", "#bcbddc", "#c6dbef", "#fdd0a2", "#c7e9c0"];

  function hexToRgb(h) { return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)]; }
  function rgbToHex(c) { return "#" + c.map(function (v) { return Math.max(0, Math.min(255, Math.round(v))).toString(16).padStart(2, "0"); }).join(""); }
  function shade(hex, t) { // t in [-1, 1]: darker .. lighter
    var c = hexToRgb(hex);
    return rgbToHex(c.map(function (v) { return t < 0 ? v * (1 + t) : v + (255 - v) * t; }));
  }
  function coarseColor(i) { var c = BASE[i % BASE.length]; return i < BASE.length ? c : shade(c, 0.35); }

  function words(s) { return (s || "").toLowerCase().split(/[^a-z0-9\u00c0-\u024f]+/).filter(Boolean); }

  function init(D) {
    var N = D.ids.length;
    if (!N) { message(_("This library has no papers on the map yet.")); return; }
    if (typeof createScatterplot !== "function") { message(_("The plotting library did not load.")); return; }
    var level = "coarse";
    var topics = D.topics;
    var nCoarse = topics.coarse.length;
    var fineColors = [];
    var siblings = {};
    topics.fine.forEach(function (t) { (siblings[t.parent] = siblings[t.parent] || []).push(t.id); });
    topics.fine.forEach(function (t) {
      var sib = siblings[t.parent], j = sib.indexOf(t.id), n = sib.length;
      fineColors[t.id] = shade(coarseColor(t.parent), n > 1 ? -0.45 + 0.85 * j / (n - 1) : 0);
    });
    var coarseColors = topics.coarse.map(function (t) { return coarseColor(t.id); });

    // -- point data ---------------------------------------------------------------------
    var x = new Float32Array(D.x), y = new Float32Array(D.y);
    var cat = { coarse: new Float32Array(D.coarse), fine: new Float32Array(D.fine) };
    var emph = new Float32Array(N).fill(1); // valueB: 1 normal/highlighted, 0 dimmed
    var highlight = null; // null or Set of paper indices
    var filtered = null; // null or array of visible indices
    var searchable = null;

    function scale(lo, hi) { // a minimal d3-style linear scale (regl-scatterplot keeps it in sync)
      var d = [-1, 1], r = [lo, hi];
      function s(v) { return r[0] + (v - d[0]) / (d[1] - d[0]) * (r[1] - r[0]); }
      s.domain = function (v) { if (!arguments.length) return d.slice(); d = v.slice(); return s; };
      s.range = function (v) { if (!arguments.length) return r.slice(); r = v.slice(); return s; };
      s.invert = function (p) { return d[0] + (p - r[0]) / (r[1] - r[0]) * (d[1] - d[0]); };
      s.copy = function () { return scale(r[0], r[1]).domain(d); };
      return s;
    }
    var xScale = scale(0, 1), yScale = scale(1, 0);
    var initialWidth = 2;

    var canvas = $("atlas-canvas");
    var plot;
    var baseSize = N > 50000 ? 2 : N > 10000 ? 3 : N > 2000 ? 4 : 6;
    try {
      plot = createScatterplot({
        canvas: canvas,
        xScale: xScale,
        yScale: yScale,
        pointSize: [baseSize * 0.8, baseSize * 1.8],
        sizeBy: "valueB",
        opacityBy: "valueB",
        opacity: [0.12, 0.9],
        pointColor: coarseColors,
        colorBy: "valueA",
        pointColorActive: "#111827",
        pointColorHover: "#111827",
        pointSizeSelected: 2,
        pointOutlineWidth: 1,
        backgroundColor: "#fbfbfd",
        lassoColor: "#1f4fd1",
        lassoType: "freeform",
        lassoMinDelay: 10,
        showReticle: false,
      });
    } catch (e) {
      message(_("This browser cannot draw the map (WebGL is unavailable): {error}", { error: e.message }));
      return;
    }

    // Every point plus a margin, fitted to the canvas's shape. The default view fits the layout's
    // height only: on a tall phone screen the sides fell off, and on any screen the outermost
    // points were cut in half by the edges.
    var everyPoint = Array.from({ length: N }, function (_, i) { return i; });
    function fitAll(opts) {
      if (!N) return Promise.resolve();
      return plot.zoomToPoints(everyPoint, Object.assign({ padding: 0.15 }, opts || {}));
    }

    function points() {
      return { x: x, y: y, valueA: cat[level], valueB: emph };
    }
    function redraw() {
      return plot.draw(points(), { zDataType: "categorical", wDataType: "continuous", preventFilterReset: true });
    }

    // -- labels on the map ---------------------------------------------------------------
    var labelLayer = $("atlas-labels");
    var labelEls = { coarse: [], fine: [] };
    ["coarse", "fine"].forEach(function (lv) {
      topics[lv].forEach(function (t) {
        var el = document.createElement("div");
        el.className = "atlas-label " + lv;
        el.textContent = t.phrases.slice(0, lv === "coarse" ? 2 : 2).join(", ") || t.label;
        el.title = t.label + " (" + t.size + " papers)";
        el.addEventListener("click", function () { zoomToTopic(lv, t.id); });
        el.hidden = true;
        labelLayer.appendChild(el);
        labelEls[lv][t.id] = el;
      });
    });
    var sizes = {};

    function placeLabels() {
      var w = canvas.clientWidth, h = canvas.clientHeight;
      var zoom = initialWidth / Math.max(1e-9, xScale.domain()[1] - xScale.domain()[0]);
      var taken = [];
      function fits(b) {
        for (var i = 0; i < taken.length; i++) {
          var o = taken[i];
          if (b[0] < o[2] && b[2] > o[0] && b[1] < o[3] && b[3] > o[1]) return false;
        }
        return true;
      }
      // coarse labels first (largest topics win a spot), then subtopic labels once zoomed in
      var order = [];
      topics.coarse.forEach(function (t) { order.push(["coarse", t]); });
      var showFine = zoom > 2.2 || level === "fine";
      if (showFine) topics.fine.forEach(function (t) { order.push(["fine", t]); });
      order.sort(function (a, b) {
        if (a[0] !== b[0]) return a[0] === "coarse" ? -1 : 1;
        return b[1].size - a[1].size;
      });
      ["coarse", "fine"].forEach(function (lv) { labelEls[lv].forEach(function (el) { if (el) el.hidden = true; }); });
      order.forEach(function (item) {
        var lv = item[0], t = item[1], el = labelEls[lv][t.id];
        if (!el || !visibleTopic(lv, t.id)) return;
        var px = xScale(t.x), py = yScale(t.y);
        if (px < 0 || py < 0 || px > w || py > h) return;
        var key = lv + t.id;
        if (!sizes[key]) { el.hidden = false; sizes[key] = [el.offsetWidth, el.offsetHeight]; }
        var sw = sizes[key][0], sh = sizes[key][1];
        // keep the whole label inside the plot, even for a topic at the border
        px = Math.max(sw / 2 + 2, Math.min(w - sw / 2 - 2, px));
        // on the anchor, else just above or below it; hidden when all three collide
        var tries = [0, -(sh + 2), sh + 2];
        for (var k = 0; k < tries.length; k++) {
          var qy = Math.max(sh / 2 + 1, Math.min(h - sh / 2 - 1, py + tries[k]));
          var box = [px - sw / 2 - 2, qy - sh / 2 - 1, px + sw / 2 + 2, qy + sh / 2 + 1];
          if (!fits(box)) continue;
          taken.push(box);
          el.style.left = px + "px";
          el.style.top = qy + "px";
          el.hidden = false;
          return;
        }
        el.hidden = true;
      });
    }

    var visibleCount = { coarse: {}, fine: {} };
    function recountVisible() {
      visibleCount = { coarse: {}, fine: {} };
      var idx = filtered || null;
      var n = idx ? idx.length : N;
      for (var k = 0; k < n; k++) {
        var i = idx ? idx[k] : k;
        visibleCount.coarse[D.coarse[i]] = (visibleCount.coarse[D.coarse[i]] || 0) + 1;
        visibleCount.fine[D.fine[i]] = (visibleCount.fine[D.fine[i]] || 0) + 1;
      }
    }
    function visibleTopic(lv, id) { return (visibleCount[lv][id] || 0) > 0; }

    var pending = false;
    function schedulePlace() {
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; placeLabels(); });
    }
    plot.subscribe("view", schedulePlace);

    // -- hover tooltip ---------------------------------------------------------------------
    var tip = $("atlas-tip");
    var mouse = [0, 0];
    canvas.addEventListener("mousemove", function (ev) {
      var r = canvas.getBoundingClientRect();
      mouse = [ev.clientX - r.left, ev.clientY - r.top];
      if (!tip.hidden) moveTip();
    });
    function moveTip() {
      var w = canvas.clientWidth;
      var left = mouse[0] + 14, top = mouse[1] + 12;
      if (left + tip.offsetWidth > w - 4) left = Math.max(4, mouse[0] - tip.offsetWidth - 14);
      tip.style.left = left + "px";
      tip.style.top = top + "px";
    }
    plot.subscribe("pointOver", function (i) {
      tip.textContent = "";
      var t = document.createElement("div");
      t.textContent = D.title[i];
      var m = document.createElement("div");
      m.className = "atlas-muted";
      m.textContent = [D.venues[D.venue[i]], D.year[i] || "", "·", topicOf("coarse", i).label].join(" ");
      tip.appendChild(t);
      tip.appendChild(m);
      tip.hidden = false;
      moveTip();
    });
    plot.subscribe("pointOut", function () { tip.hidden = true; });

    function topicOf(lv, i) { return topics[lv][lv === "coarse" ? D.coarse[i] : D.fine[i]] || { label: "", phrases: [] }; }

    // -- panel: one paper, a selection, or the topic list ------------------------------------
    var info = $("atlas-info");
    var paperUrl = root.getAttribute("data-paper-url") || "";
    function linkFor(i) {
      if (paperUrl) return paperUrl.replace("{id}", encodeURIComponent(D.ids[i]).replace(/%2F/g, "/"));
      return D.url[i] || "";
    }
    function el(tag, cls, text) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      return e;
    }
    function chips(list) {
      var c = el("div", "atlas-chips");
      list.forEach(function (p) { c.appendChild(el("span", "atlas-chip", p)); });
      return c;
    }
    function closeButton() {
      var b = el("button", "atlas-close", "\u00d7");
      b.type = "button";
      b.title = _("Close");
      b.addEventListener("click", function () { plot.deselect(); showInfo(null); });
      return b;
    }
    function paperTitle(i) {
      var href = linkFor(i);
      if (!href) return el("span", "", D.title[i]);
      var a = el("a", "", D.title[i]);
      a.href = href;
      if (!paperUrl) { a.target = "_blank"; a.rel = "noopener"; }
      return a;
    }
    function showInfo(sel) {
      info.textContent = "";
      if (!sel || !sel.length) { info.hidden = true; return; }
      info.appendChild(closeButton());
      if (sel.length === 1) {
        var i = sel[0];
        info.setAttribute("data-paper", D.ids[i]);
        var h = el("h3");
        h.appendChild(paperTitle(i));
        info.appendChild(h);
        info.appendChild(el("div", "atlas-muted", [D.authors[i], D.venues[D.venue[i]] + " " + (D.year[i] || "")].filter(Boolean).join(" · ")));
        info.appendChild(el("div", "", _("Topic: {label}", { label: topicOf("coarse", i).label })));
        info.appendChild(el("div", "atlas-muted", _("Subtopic: {label}", { label: topicOf("fine", i).label })));
        info.appendChild(chips(D.phrases[i].map(function (j) { return D.vocab[j]; })));
        ((D.events || {})[String(i)] || []).forEach(function (e) {
          // [type, session, when, place]: when and where the programme presents it
          var kind = e[0] ? _(e[0]) : "";
          var line = [kind ? kind.charAt(0).toUpperCase() + kind.slice(1) : "", e[1], e[2], e[3]].filter(Boolean).join(" \u00b7 ");
          var d = el("div", "atlas-event", line);
          d.title = _("at the conference");
          info.appendChild(d);
        });
        var href = linkFor(i);
        if (href) {
          var a = el("a", "", _("Open paper") + " \u2197");
          a.href = href;
          if (!paperUrl) { a.target = "_blank"; a.rel = "noopener"; }
          info.appendChild(a);
        }
      } else {
        info.removeAttribute("data-paper");
        info.appendChild(el("h3", "", _("{n} papers selected", { n: sel.length })));
        info.appendChild(el("div", "atlas-muted", _("Key phrases of the selection")));
        info.appendChild(chips(selectionPhrases(sel, 8)));
        var list = el("ol");
        sel.slice(0, 300).forEach(function (i) {
          var li = el("li");
          li.appendChild(paperTitle(i));
          list.appendChild(li);
        });
        info.appendChild(list);
        if (sel.length > 300) info.appendChild(el("div", "atlas-muted", _("\u2026 and {n} more", { n: sel.length - 300 })));
      }
      info.hidden = false;
      info.scrollIntoView({ block: "nearest" });
    }

    // document frequency of each phrase over all papers, for a selection's tf-idf
    var df = new Float32Array(D.vocab.length);
    D.phrases.forEach(function (ps) { ps.forEach(function (j) { df[j] += 1; }); });
    function selectionPhrases(sel, k) {
      var tf = {};
      sel.forEach(function (i) { D.phrases[i].forEach(function (j) { tf[j] = (tf[j] || 0) + 1; }); });
      var ranked = Object.keys(tf).filter(function (j) { return tf[j] > 1 || sel.length < 4; }).map(function (j) {
        return [D.vocab[j], tf[j] * Math.log(N / df[j])];
      });
      ranked.sort(function (a, b) { return b[1] - a[1]; });
      return ranked.slice(0, k).map(function (r) { return r[0]; });
    }

    plot.subscribe("select", function (ev) { showInfo(Array.from(ev.points)); });
    plot.subscribe("deselect", function () { showInfo(null); });

    // -- topic list ----------------------------------------------------------------------------
    function renderTopicList() {
      var ol = $("atlas-topic-list");
      ol.textContent = "";
      var list = topics[level].slice().sort(function (a, b) { return b.size - a.size; });
      list.forEach(function (t) {
        if (!visibleTopic(level, t.id)) return;
        var li = el("li");
        var sw = el("span", "atlas-swatch");
        sw.style.background = level === "coarse" ? coarseColors[t.id] : fineColors[t.id];
        li.appendChild(sw);
        li.appendChild(el("span", "", t.label));
        li.appendChild(el("span", "atlas-size", String(visibleCount[level][t.id] || 0)));
        li.addEventListener("click", function () { zoomToTopic(level, t.id); });
        ol.appendChild(li);
      });
    }

    // -- phones: the panel is a drawer; search results list the papers, a click flies there ---
    var phone = window.matchMedia ? window.matchMedia("(max-width: 720px)") : { matches: false };
    var drawerBtn = $("atlas-drawer");
    function setDrawer(open) {
      root.classList.toggle("drawer-open", open);
      drawerBtn.setAttribute("aria-expanded", open ? "true" : "false");
    }
    drawerBtn.addEventListener("click", function () { setDrawer(!root.classList.contains("drawer-open")); });
    var results = $("atlas-results");
    function flyTo(i) {
      if (phone.matches) setDrawer(false);
      plot.zoomToPoints([i], { transition: true, padding: 0.6 });
      plot.select([i]);
      showInfo([i]);
    }
    function matching(n) { return n === 1 ? _("1 matching paper") : _("{n} matching papers", { n: n }); }
    function showResults(order, heading) {
      results.textContent = "";
      if (!order) { results.hidden = true; return; }
      results.appendChild(el("h2", "", heading));
      if (!order.length) {
        results.appendChild(el("p", "atlas-muted", _("No papers on the map match. Try other words.")));
      } else {
        var list = el("ol");
        order.slice(0, 200).forEach(function (i) {
          var li = el("li"), b = el("button", "", D.title[i]);
          b.type = "button";
          b.setAttribute("data-index", String(i));
          b.appendChild(el("span", "atlas-muted", [D.authors[i], D.venues[D.venue[i]] + " " + (D.year[i] || "")].filter(Boolean).join(" \u00b7 ")));
          b.addEventListener("click", function () { flyTo(i); });
          li.appendChild(b);
          list.appendChild(li);
        });
        results.appendChild(list);
        if (order.length > 200) results.appendChild(el("div", "atlas-muted", _("\u2026 and {n} more", { n: order.length - 200 })));
      }
      results.hidden = false;
      if (phone.matches) setDrawer(true);
    }

    function zoomToTopic(lv, id) {
      var members = [];
      var col = lv === "coarse" ? D.coarse : D.fine;
      for (var i = 0; i < N; i++) if (col[i] === id) members.push(i);
      if (members.length) plot.zoomToPoints(members, { transition: true, padding: 0.25 });
    }

    // -- search, saved papers, filters -------------------------------------------------------
    var searchUrl = root.getAttribute("data-search-url") || "";
    var countEl = $("atlas-count");
    function buildIndex() {
      searchable = D.title.map(function (t, i) {
        return (t + " " + D.authors[i] + " " + D.phrases[i].map(function (j) { return D.vocab[j]; }).join(" ")).toLowerCase();
      });
    }
    function setHighlight(set, label) {
      highlight = set;
      for (var i = 0; i < N; i++) emph[i] = !set || set.has(i) ? 1 : 0;
      countEl.textContent = set ? label : "";
      root.setAttribute("data-highlighted", set ? String(set.size) : "");
      redraw();
    }
    function localSearch(q) {
      var terms = words(q);
      if (!terms.length) return null;
      if (!searchable) buildIndex();
      var hits = new Set();
      for (var i = 0; i < N; i++) {
        var s = searchable[i], ok = true;
        for (var k = 0; k < terms.length; k++) if (s.indexOf(terms[k]) < 0) { ok = false; break; }
        if (ok) hits.add(i);
      }
      return hits;
    }
    var index = null;
    function idIndex() {
      if (!index) { index = {}; D.ids.forEach(function (id, i) { index[id] = i; }); }
      return index;
    }
    var searchTimer = 0, searchSeq = 0;
    $("atlas-search").addEventListener("input", function (ev) {
      clearTimeout(searchTimer);
      var q = ev.target.value.trim();
      searchTimer = setTimeout(function () {
        var seq = ++searchSeq;
        if (!q) { setHighlight(null, ""); showResults(null); return; }
        if (!searchUrl) {
          var hits = localSearch(q);
          setHighlight(hits, hits.size === 1 ? _("1 match") : _("{n} matches", { n: hits.size }));
          showResults(Array.from(hits), matching(hits.size));
          return;
        }
        fetch(searchUrl + (searchUrl.indexOf("?") < 0 ? "?" : "&") + "per_page=100&q=" + encodeURIComponent(q), { credentials: "same-origin" })
          .then(function (r) { return r.json(); })
          .then(function (res) {
            if (seq !== searchSeq) return;
            var rows = Array.isArray(res) ? res : (res.hits || res.results || []);
            var ids = idIndex(), hits = new Set(), order = [];
            rows.forEach(function (h) {
              var i = ids[h.id || (h.paper && h.paper.id)];
              if (i !== undefined && !hits.has(i)) { hits.add(i); order.push(i); }
            });
            setHighlight(hits, _("{n} search results", { n: hits.size }));
            showResults(order, res.no_good_match ? _("No good matches") : matching(hits.size));
          })
          .catch(function () {
            var hits = localSearch(q);
            setHighlight(hits, _("{n} matches", { n: hits.size }));
            showResults(Array.from(hits), matching(hits.size));
          });
      }, 180);
    });

    var savedBtn = $("atlas-saved");
    if (!D.saved || !D.saved.length) savedBtn.hidden = true;
    savedBtn.addEventListener("click", function () {
      var on = !savedBtn.classList.contains("on");
      savedBtn.classList.toggle("on", on);
      $("atlas-search").value = "";
      setHighlight(on ? new Set(D.saved) : null, on ? _("{n} saved", { n: D.saved.length }) : "");
    });

    var venueSel = $("atlas-venue"), yearSel = $("atlas-year");
    D.venues.forEach(function (v, i) { if (v) { var o = el("option", "", v); o.value = String(i); venueSel.appendChild(o); } });
    Array.from(new Set(D.year.filter(Boolean))).sort().forEach(function (yv) {
      var o = el("option", "", String(yv)); o.value = String(yv); yearSel.appendChild(o);
    });
    if (D.venues.filter(Boolean).length < 2) venueSel.hidden = true;
    if (yearSel.options.length < 3) yearSel.hidden = true;
    function applyFilter() {
      var v = venueSel.value, yv = yearSel.value;
      if (!v && !yv) { filtered = null; plot.unfilter(); }
      else {
        filtered = [];
        for (var i = 0; i < N; i++) {
          if (v && String(D.venue[i]) !== v) continue;
          if (yv && String(D.year[i]) !== yv) continue;
          filtered.push(i);
        }
        plot.filter(filtered);
      }
      root.setAttribute("data-visible", String(filtered ? filtered.length : N));
      recountVisible();
      renderTopicList();
      schedulePlace();
    }
    venueSel.addEventListener("change", applyFilter);
    yearSel.addEventListener("change", applyFilter);

    // -- level and mouse mode ------------------------------------------------------------------
    Array.from(document.querySelectorAll("[data-level]")).forEach(function (b) {
      b.addEventListener("click", function () {
        level = b.getAttribute("data-level");
        document.querySelectorAll("[data-level]").forEach(function (o) { o.classList.toggle("on", o === b); });
        plot.set({ pointColor: level === "coarse" ? coarseColors : fineColors });
        redraw().then(schedulePlace);
        renderTopicList();
      });
    });
    Array.from(document.querySelectorAll("[data-mode]")).forEach(function (b) {
      b.addEventListener("click", function () {
        var mode = b.getAttribute("data-mode");
        document.querySelectorAll("[data-mode]").forEach(function (o) { o.classList.toggle("on", o === b); });
        if (mode === "pan") plot.set({ mouseMode: "panZoom" });
        else plot.set({ mouseMode: "lasso", lassoType: mode === "box" ? "rectangle" : "freeform" });
      });
    });
    $("atlas-reset").addEventListener("click", function () {
      $("atlas-search").value = "";
      savedBtn.classList.remove("on");
      venueSel.value = "";
      yearSel.value = "";
      plot.deselect();
      setHighlight(null, "");
      showResults(null);
      applyFilter();
      fitAll({ transition: true });
    });

    // a small scripting surface, used by the browser tests and handy in the console
    window.paperatlasMap = {
      plot: plot, data: D,
      select: function (ids) { plot.select(ids); },
      flyTo: flyTo,
      screenPosition: function (i) { return plot.getScreenPosition(i); },
      visibleLabels: function () {
        return Array.from(labelLayer.children).filter(function (e) { return !e.hidden; }).map(function (e) { return e.textContent; });
      },
    };

    recountVisible();
    renderTopicList();
    redraw().then(function () { return fitAll(); }).then(function () {
      initialWidth = xScale.domain()[1] - xScale.domain()[0];
      placeLabels();
      root.setAttribute("data-ready", "1");
    });
  }

  loadData().then(init).catch(function (e) {
    message(_("Could not load the map: {error}", { error: e.message }));
    root.setAttribute("data-error", e.message);
  });
})();
