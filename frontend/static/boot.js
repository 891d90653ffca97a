// Starts the SPA. A file of its own, not an inline script: the content security policy
// (dist/_headers) allows scripts from this origin only.
import init from "/__JS__";
init({ module_or_path: "/__WASM__" });
