/* paperatlas service worker: the programme, session and agenda pages (and the site's styles and
   scripts) are answered from the network when there is one, and from what was saved when there is
   not, so a phone keeps its agenda in a hall without Wi-Fi. Nothing else is touched. */
const CACHE = "paperatlas-programme-v1";
const KEEP = /^\/(programme|agenda|session\/|static\/)/;

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function keep(request) {
  const url = new URL(request.url);
  return request.method === "GET" && url.origin === self.location.origin && KEEP.test(url.pathname);
}

/* A saved page says so itself: navigator.onLine is no guide (a browser with a network interface
   but no route, or an emulated outage, still reports online), so the copy answered from the cache
   carries the mark that shows its "offline" notice. */
function markedOffline(hit) {
  if (!(hit.headers.get("content-type") || "").includes("text/html")) return hit;
  return hit.text().then((html) => new Response(
    html.replace(/data-offline-state hidden/g, "data-offline-state data-served-offline"),
    { status: hit.status, statusText: hit.statusText, headers: hit.headers }));
}

self.addEventListener("fetch", (event) => {
  if (!keep(event.request)) return;
  event.respondWith(
    fetch(event.request).then((response) => {
      if (response.ok) {
        const copy = response.clone();
        caches.open(CACHE).then((cache) => cache.put(event.request, copy));
      }
      return response;
    }).catch(() => caches.open(CACHE).then((cache) =>
      cache.match(event.request).then((hit) => hit || cache.match(event.request, { ignoreSearch: true }))
    ).then((hit) => hit ? markedOffline(hit) : new Response("offline, and this page was not opened before", {
      status: 503, headers: { "content-type": "text/plain; charset=utf-8" } })))
  );
});

self.addEventListener("message", (event) => {
  const urls = (event.data && event.data.cache) || [];
  if (urls.length) {
    event.waitUntil(caches.open(CACHE).then((cache) =>
      Promise.all(urls.filter((u) => KEEP.test(u)).map((u) => fetch(u).then((r) => r.ok && cache.put(u, r)).catch(() => {})))));
  }
});
