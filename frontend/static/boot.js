// Starts the SPA. A file of its own, not an inline script: the content security policy
// (dist/_headers) allows scripts from this origin only. Leptos's hydration reads what a
// streaming server would have left in these globals; a build-time shell leaves nothing.
window.__RESOLVED_RESOURCES = [];
window.__SERIALIZED_ERRORS = [];
window.__INCOMPLETE_CHUNKS = [];
import init from "/__JS__";
init({ module_or_path: "/__WASM__" });
