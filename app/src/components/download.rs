//! Saving text the app fetched (with its authorization header) as a file the browser downloads.

use wasm_bindgen::JsCast;

/// Offers `text` as a download named `name`: a Blob, an object URL, and a temporary
/// `<a download>` clicked once, then removed (the URL is revoked a minute later).
pub fn save_text(name: &str, text: &str, mime: &str) -> Result<(), String> {
    let fail = |what: &str| format!("could not save {name}: {what}");
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| fail("no Blob"))?;
    let url =
        web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| fail("no object URL"))?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| fail("no document"))?;
    let a: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|_| fail("no link"))?
        .unchecked_into();
    a.set_href(&url);
    a.set_download(name);
    a.set_hidden(true);
    let body = document.body().ok_or_else(|| fail("no body"))?;
    let _ = body.append_child(&a);
    a.click();
    a.remove();
    // Revoked a little later: some browsers still read the URL after the click returns.
    gloo_timers::callback::Timeout::new(60_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
    Ok(())
}
