/* The programme pages offline: a service worker keeps what was opened (and the sessions of your
   agenda) readable without a network; done/skip on a walk cross a poster out until you are back. */
(function () {
  "use strict";
  function showOffline() {
    document.querySelectorAll("[data-offline-state]").forEach((el) => {
      el.hidden = navigator.onLine && !el.hasAttribute("data-served-offline");
    });
  }
  window.addEventListener("online", showOffline);
  window.addEventListener("offline", showOffline);
  document.addEventListener("DOMContentLoaded", () => {
    showOffline();
    if ("serviceWorker" in navigator) {
      navigator.serviceWorker.register("/programme-sw.js").then(() => navigator.serviceWorker.ready).then((reg) => {
        const urls = [];
        document.querySelectorAll("[data-offline-urls]").forEach((el) => {
          el.getAttribute("data-offline-urls").split(" ").forEach((u) => { if (u) urls.push(u); });
        });
        if (reg.active && urls.length) reg.active.postMessage({ cache: urls });
      }).catch(() => {});
    }
    document.querySelectorAll("a[data-walk]").forEach((a) => {
      a.addEventListener("click", (ev) => {
        // a page answered from the saved copy is offline whatever navigator.onLine says
        if (navigator.onLine && !document.querySelector("[data-served-offline]")) return;
        ev.preventDefault();
        const li = a.closest("li");
        if (li) li.classList.add("gone");
      });
    });
  });
})();
