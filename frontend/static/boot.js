// Starts the SPA. A file of its own, not an inline script: the content security policy
// (dist/_headers) allows scripts from this origin only. Leptos's hydration reads what a
// streaming server would have left in these globals; a build-time shell leaves nothing.
window.__RESOLVED_RESOURCES = [];
window.__SERIALIZED_ERRORS = [];
window.__INCOMPLETE_CHUNKS = [];

// The page's first GETs (app::shell::first_gets, in <head>), asked now, beside the wasm's
// download, with the headers the app's calls send; the app takes each answer once
// (app::api::early), instead of asking after it has started.
window.__firstGets = new Map();
try {
  const plan = JSON.parse(document.getElementById("first-gets")?.textContent ?? "null");
  if (plan) {
    const key = sessionStorage.getItem(plan.key_item);
    const headers = { [plan.header[0]]: plan.header[1] };
    if (key) headers.authorization = `Bearer ${key}`;
    for (const path of plan.urls) {
      const url = new URL(path, location.href).href;
      const answer = fetch(url, { headers });
      answer.catch(() => {}); // a failed one is asked again by the app
      window.__firstGets.set(url, { answer, key, at: Date.now() });
    }
  }
} catch (_) {
  // Storage refused or a malformed plan: the app asks for everything itself.
}

const { default: init } = await import("/__JS__");
init({ module_or_path: "/__WASM__" });
