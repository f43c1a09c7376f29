// paperatlas: search as you type, stars without reloads, copy BibTeX, keyboard (/ j k s o).
// Plain JS, no dependencies; every page also works without it (forms POST and redirect).
"use strict";

// A response of server-sent events, read as it arrives: onEvent(kind, data) for each event, data its
// JSON (null when the event carries none). The ask box and the paper page's generate buttons read it.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    buf += dec.decode(chunk.value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let kind = "message";
      let data = "";
      block.split("\n").forEach(function (line) {
        if (line.startsWith("event: ")) kind = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      });
      onEvent(kind, data ? JSON.parse(data) : null);
    }
  }
}

(function () {
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  // UI strings in the page's language: base.html embeds the translations of web/common.py's JS_MESSAGES
  let strings = {};
  try { strings = JSON.parse((document.getElementById("pa-i18n") || {}).textContent || "{}"); } catch (e) { /* English */ }
  const _ = (s) => strings[s] || s;

  function toast(msg) {
    const t = document.createElement("div");
    t.className = "toast"; t.setAttribute("role", "status"); t.textContent = msg;
    document.body.appendChild(t);
    setTimeout(() => t.remove(), 1600);
  }
  // shared with personal.js (loaded after this file, both deferred)
  window.paperatlas = { csrf, toast, _ };

  // -- search as you type -----------------------------------------------------------
  const form = document.getElementById("search-form");
  const results = document.getElementById("results");
  let timer = null, inflight = null, seq = 0;

  function searchParams() {
    const p = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v !== "" && !(k === "mode" && v === "hybrid")) p.append(k, v);
    return p;
  }
  async function runSearch() {
    const p = searchParams();
    const shareable = "/search" + (p.toString() ? "?" + p : "");
    history.replaceState(null, "", shareable);
    // words, or a filter that lists papers by itself (an author, a session, a day...)
    const listing = ["q", "author", "session", "day", "room", "institution", "country", "type"].some((k) => p.get(k));
    if (!listing) { results.innerHTML = ""; return; }
    const mine = ++seq;
    if (inflight) inflight.abort();
    inflight = new AbortController();
    p.set("fragment", "1");
    try {
      const r = await fetch("/search?" + p, { signal: inflight.signal, headers: { Accept: "text/html" } });
      const html = await r.text();
      if (mine !== seq) return; // a newer keystroke won
      results.innerHTML = html;
      selected = -1;
      document.title = (p.get("q") ? p.get("q") + " — " + _("search") : _("Search")) + " · paperatlas";
    } catch (e) {
      if (e.name !== "AbortError") { results.innerHTML = '<p class="error"></p>'; results.firstChild.textContent = _("Search failed; press Enter to retry."); }
    }
  }
  if (form && results) {
    const q = document.getElementById("q");
    q.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(runSearch, 180); });
    form.addEventListener("change", (e) => { if (e.target !== q) { clearTimeout(timer); runSearch(); } });
    form.addEventListener("submit", (e) => { e.preventDefault(); clearTimeout(timer); runSearch(); });
  }

  // -- stars ----------------------------------------------------------------------------
  document.addEventListener("submit", async (e) => {
    const f = e.target;
    if (!f.classList || !f.classList.contains("star-form")) return;
    e.preventDefault();
    const btn = f.querySelector("button.star");
    const onInput = f.querySelector('input[name="on"]');
    const body = new URLSearchParams(new FormData(f));
    try {
      const r = await fetch(f.action, {
        method: "POST", body,
        headers: { "X-CSRF-Token": csrf(), Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
      });
      const data = await r.json();
      if (!r.ok) { toast(data.error || _("Could not save")); return; }
      const on = !!data.starred;
      // every star for this paper on the page (a paper can be listed twice)
      document.querySelectorAll("form.star-form").forEach((g) => {
        if (g.action !== f.action) return;
        const b = g.querySelector("button.star");
        b.classList.toggle("on", on); b.textContent = on ? "★" : "☆";
        b.setAttribute("aria-pressed", on ? "true" : "false");
        b.setAttribute("aria-label", on ? _("Unstar") : _("Star"));
        b.title = (on ? _("Unstar") : _("Star (save)")) + " (s)";
        g.querySelector('input[name="on"]').value = on ? "0" : "1";
      });
      toast(on ? _("Saved ★") : _("Removed from saved"));
      document.dispatchEvent(new CustomEvent("pa:feedback", { detail: { kind: "like", on, action: f.action } }));
    } catch (err) { toast(_("Could not save")); }
  });

  // -- copy BibTeX ----------------------------------------------------------------------
  document.addEventListener("click", async (e) => {
    const b = e.target.closest && e.target.closest("[data-copy]");
    if (b) {
      const src = document.querySelector(b.dataset.copy);
      if (!src) return;
      const text = src.textContent;
      try { await navigator.clipboard.writeText(text); }
      catch (err) { // clipboard API needs a secure context; fall back to a selection
        const ta = document.createElement("textarea");
        ta.value = text; document.body.appendChild(ta); ta.select();
        try { document.execCommand("copy"); } catch (e2) { /* shown below anyway */ }
        ta.remove();
      }
      toast(_("BibTeX copied"));
      return;
    }
    if (e.target.closest && e.target.closest("[data-show-keys]")) showKeys();
  });

  function showKeys() {
    const old = document.querySelector(".keyhelp");
    if (old) { old.remove(); return; }
    const d = document.createElement("div");
    d.className = "keyhelp";
    const rows = [["/", _("search")], ["j / k", _("next / previous paper")], ["s", _("star the selected paper")],
      ["o / Enter", _("open it")], ["Esc", _("leave the search box")], ["?", _("this help")]];
    for (const [k, v] of rows) {
      const line = document.createElement("div");
      const kbd = document.createElement("kbd"); kbd.textContent = k;
      line.appendChild(kbd); line.append(" " + v);
      d.appendChild(line);
    }
    document.body.appendChild(d);
  }

  // -- keyboard ---------------------------------------------------------------------------
  let selected = -1;
  const items = () => Array.from(document.querySelectorAll(".paper-item"));
  function select(i) {
    const list = items();
    if (!list.length) return;
    selected = Math.max(0, Math.min(list.length - 1, i));
    list.forEach((el, j) => el.classList.toggle("selected", j === selected));
    list[selected].scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable);
    if (typing) {
      if (e.key === "Escape") t.blur();
      else if (e.key === "ArrowDown" && t.id === "q" && items().length) { e.preventDefault(); t.blur(); select(0); }
      return;
    }
    const list = items();
    const cur = selected >= 0 ? list[selected] : null;
    switch (e.key) {
      case "/": {
        const q = document.getElementById("q");
        e.preventDefault();
        if (q) { q.focus(); q.select(); } else location.href = "/search";
        break;
      }
      case "j": select(selected + 1); break;
      case "k": select(selected - 1); break;
      case "s": {
        const scope = cur || document.querySelector(".paper-head");
        const f = scope && scope.querySelector("form.star-form");
        if (f) f.requestSubmit();
        break;
      }
      case "o": case "Enter": {
        const a = cur && cur.querySelector("a.title");
        if (a) { e.preventDefault(); location.href = a.href; }
        break;
      }
      case "?": showKeys(); break;
      default: return;
    }
  });
})();

// Ask: where a model is configured, show the answer as the model writes it (POST /ask with stream=1
// answers server-sent events; a POST, because asking spends the model and stores the answer), then load
// the answer's page (GET /ask shows the stored answer, whose citations and sources the server renders).
// Without scripts, or where fetch streams are missing, the form posts as it is.
(function () {
  const form = document.querySelector("form.ask-form[data-stream]");
  if (!form || !window.fetch || !window.TextDecoder) return;
  form.addEventListener("submit", async function (ev) {
    const input = form.querySelector("input[name=q]");
    const q = input ? input.value.trim() : "";
    if (!q) return;
    ev.preventDefault();
    const page = "/ask?q=" + encodeURIComponent(q);
    let live = document.querySelector(".answer-live");
    if (!live) {
      live = document.createElement("p");
      live.className = "answer-live";
      live.setAttribute("aria-live", "polite");
      form.after(live);
    }
    live.textContent = "";
    const body = new URLSearchParams(new FormData(form));
    body.set("stream", "1");
    let failure = null;
    let finished = false;
    try {
      const r = await fetch("/ask", { method: "POST", body: body, headers: { accept: "text/event-stream" } });
      if (!r.ok || !r.body) {
        let e = null;
        try { e = await r.json(); } catch (x) { e = null; }
        failure = e && e.error ? e : { error: "HTTP " + r.status, fix: "" };
      } else {
        await readEvents(r, function (kind, d) {
          if (d === null) return;
          if (kind === "message") live.textContent += d.text;
          else if (kind === "done") finished = true;
          else if (kind === "error") failure = d;
        });
      }
    } catch (x) {
      form.submit();  // the stream could not start: the plain form says why when it is done
      return;
    }
    if (finished) { location.assign(page); return; }
    live.className = "error";
    live.textContent = failure ? failure.error + (failure.fix ? " " + failure.fix : "") : "";
  });
})();

// The paper page's TL;DR / FAQ / translate buttons: show the text as the model writes it (POST
// /generate with stream=1 answers server-sent events), then reload the page, which shows the kept text.
// Without scripts, or where fetch streams are missing, the forms post as they are.
(function () {
  const forms = document.querySelectorAll(".llm-actions form[action='/generate']");
  if (!forms.length || !window.fetch || !window.TextDecoder) return;
  forms.forEach(function (form) {
    form.addEventListener("submit", async function (ev) {
      ev.preventDefault();
      const live = document.createElement("p");
      live.className = "generate-live";
      live.setAttribute("aria-live", "polite");
      form.closest(".llm-actions").after(live);
      form.closest(".llm-actions").querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      const body = new URLSearchParams(new FormData(form));
      body.set("stream", "1");
      let result = null;
      let failure = null;
      try {
        const r = await fetch("/generate", { method: "POST", body: body, headers: { accept: "text/event-stream" } });
        if (!r.ok || !r.body) throw new Error("HTTP " + r.status);
        await readEvents(r, function (kind, d) {
          d = d || {};
          if (kind === "message") live.textContent += d.text || "";
          else if (kind === "done") result = d;
          else if (kind === "error") failure = d;
        });
      } catch (e) {
        form.submit();  // the plain form: the page the server answers says what happened
        return;
      }
      if (failure) {
        live.className = "error";
        live.textContent = failure.error + (failure.fix ? " " + failure.fix : "");
        return;
      }
      const u = new URL(location.href);
      // as the plain form's answer does: the note of an earlier attempt goes, a new one comes
      if (result && result.note) u.searchParams.set("llm", "not-kept");
      else u.searchParams.delete("llm");
      location.assign(u.toString());
    });
  });
})();
