// paperatlas personal pages: "not interested", tags and "save this search" without reloads,
// For you refreshed after each judgement, triage keys (a/b, ←/→, n neither, u can't tell), x = not interested.
// Every form also works without this file (it posts and is redirected back).
"use strict";
(function () {
  document.documentElement.classList.add("js");
  const { csrf, toast, _ } = window.paperatlas;  // from app.js

  // getAttribute: a form with an <input name="action"> shadows the form.action property
  const target = (form) => form.getAttribute("action");
  async function post(form) {
    const r = await fetch(target(form), {
      method: "POST", body: new URLSearchParams(new FormData(form)),
      headers: { "X-CSRF-Token": csrf(), Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded" },
    });
    let data = {};
    try { data = await r.json(); } catch (e) { /* not JSON: reported below */ }
    if (!r.ok) throw new Error(data.error || _("Could not save"));
    return data;
  }
  const feedback = (detail) => document.dispatchEvent(new CustomEvent("pa:feedback", { detail }));

  function showTags(form, tags) {
    const body = form.closest(".body");
    if (!body) return;
    let ul = body.querySelector("ul.taglist");
    if (!ul) {
      ul = document.createElement("ul"); ul.className = "taglist small";
      body.insertBefore(ul, form.closest(".card-actions"));
    }
    ul.textContent = "";
    for (const t of tags) {
      const li = document.createElement("li"), a = document.createElement("a");
      a.href = "/saved?tag=" + encodeURIComponent(t); a.textContent = t;
      li.appendChild(a); ul.appendChild(li);
    }
  }

  document.addEventListener("submit", async (e) => {
    const f = e.target;
    if (!f.classList) return;
    if (f.classList.contains("dismiss-form")) {
      e.preventDefault();
      try {
        const on = !!(await post(f)).dismissed;
        document.querySelectorAll("form.dismiss-form").forEach((g) => {
          if (target(g) !== target(f)) return;
          const b = g.querySelector("button.dismiss");
          b.classList.toggle("on", on); b.setAttribute("aria-pressed", on ? "true" : "false");
          b.textContent = on ? _("not interested") + " ✓" : _("not interested");
          g.querySelector('input[name="on"]').value = on ? "0" : "1";
          const card = g.closest(".paper-item");
          if (card) card.classList.toggle("dismissed", on);
        });
        toast(on ? _("Fewer papers like this") : _("Undone"));
        feedback({ kind: "dislike", on, action: target(f) });
      } catch (err) { toast(err.message); }
    } else if (f.classList.contains("tag-form") && f.closest(".paper-item")) {
      e.preventDefault();
      try {
        showTags(f, (await post(f)).tags || []);
        f.reset();
        const d = f.closest("details");
        if (d) d.open = false;
        toast(_("Tagged"));
      } catch (err) { toast(err.message); }
    } else if (f.classList.contains("save-search")) {
      e.preventDefault();
      try {
        const data = await post(f);
        const a = document.createElement("a");
        a.href = data.feed; a.className = "feed saved-search"; a.textContent = _("saved · Atom feed");
        f.replaceWith(a);
        toast(_("Search saved: see Digest for its feed"));
      } catch (err) { toast(err.message); }
    }
  });

  // -- For you: the list follows each like / not interested ---------------------------------
  const list = document.getElementById("foryou-list");
  let timer = null;
  async function refresh() {
    const r = await fetch(list.dataset.src, { headers: { Accept: "text/html" } });
    if (!r.ok) return;
    list.innerHTML = await r.text();
    list.classList.add("refreshed");
    setTimeout(() => list.classList.remove("refreshed"), 700);
  }
  if (list) {
    document.addEventListener("pa:feedback", () => { clearTimeout(timer); timer = setTimeout(refresh, 350); });
  }
  document.querySelectorAll(".method-switch input[type=radio]").forEach((r) =>
    r.addEventListener("change", () => r.form.submit()));

  // -- keys: triage and "not interested" -------------------------------------------------
  const duel = document.querySelector(".duel");
  let answered = false; // one answer per pair, however fast the keys come
  function answer(form) {
    if (!form || answered) return;
    answered = true;
    form.classList.add("chosen");
    form.requestSubmit();
  }
  document.addEventListener("submit", (e) => {
    if (e.target.matches && e.target.matches("form.choose, form.neither, form.skip")) {
      if (answered && !e.target.classList.contains("chosen")) { e.preventDefault(); return; }
      answered = true;
      e.target.classList.add("chosen");
    }
  }, true);
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (duel) {
      const pick = { a: "a", ArrowLeft: "a", b: "b", ArrowRight: "b" }[e.key];
      if (pick) { e.preventDefault(); answer(document.querySelector('form.choose[data-key="' + pick + '"]')); return; }
      if (e.key === "n") { e.preventDefault(); answer(document.querySelector("form.neither")); return; }
      if (e.key === "u") { e.preventDefault(); answer(document.querySelector("form.skip")); return; }
    }
    if (e.key === "x") {
      const f = document.querySelector(".paper-item.selected form.dismiss-form");
      if (f) { e.preventDefault(); f.requestSubmit(); }
    }
  });
})();
