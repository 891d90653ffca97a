//! Sending PDFs with upload progress.

use pipeline::dto::UploadAck;
use pipeline::error::ErrorBody;
use pipeline::status::Mode;

use super::error::ApiError;

/// `POST /batches` with the files (and their names), through `XMLHttpRequest` because `fetch`
/// reports no upload progress: `on_progress(bytes_sent, bytes_total)` is called as the body goes
/// out.
pub async fn upload_pdfs(
    files: &[(web_sys::File, String)],
    mode: Mode,
    template: &str,
    on_progress: impl Fn(f64, f64) + 'static,
) -> Result<UploadAck, ApiError> {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let fail = |what: &str| ApiError {
        status: 0,
        message: format!("could not send the upload: {what}"),
        field: None,
    };
    let form = web_sys::FormData::new().map_err(|_| fail("no FormData"))?;
    for (file, name) in files {
        form.append_with_blob_and_filename("files", file, name)
            .map_err(|_| fail("a file could not be added"))?;
    }
    form.append_with_str("mode", mode.as_str())
        .map_err(|_| fail("mode"))?;
    form.append_with_str("template", template)
        .map_err(|_| fail("template"))?;
    let xhr = web_sys::XmlHttpRequest::new().map_err(|_| fail("no XMLHttpRequest"))?;
    xhr.open("POST", "/batches").map_err(|_| fail("open"))?;
    xhr.set_request_header(pipeline::open_mode::CLIENT_HEADER, "claude-pipeline-spa")
        .map_err(|_| fail("a header"))?;
    // Keys mode: the upload is the caller's, like every other call.
    if let Some(key) = super::session::api_key() {
        xhr.set_request_header("authorization", &format!("Bearer {key}"))
            .map_err(|_| fail("the key"))?;
    }
    let progress =
        Closure::<dyn Fn(web_sys::ProgressEvent)>::new(move |e: web_sys::ProgressEvent| {
            on_progress(e.loaded(), e.total());
        });
    if let Ok(upload) = xhr.upload() {
        upload.set_onprogress(Some(progress.as_ref().unchecked_ref()));
    }
    // The answer (or a network failure) resolves this promise.
    let done = js_sys::Promise::new(&mut |resolve, _reject| {
        let r1 = resolve.clone();
        let on_load = Closure::once_into_js(move || {
            let _ = r1.call0(&wasm_bindgen::JsValue::NULL);
        });
        let on_error = Closure::once_into_js(move || {
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        });
        xhr.set_onload(Some(on_load.unchecked_ref()));
        xhr.set_onerror(Some(on_error.unchecked_ref()));
    });
    xhr.send_with_opt_form_data(Some(&form))
        .map_err(|_| fail("send"))?;
    let _ = wasm_bindgen_futures::JsFuture::from(done).await;
    drop(progress);
    let status = xhr.status().unwrap_or(0);
    let text = xhr.response_text().ok().flatten().unwrap_or_default();
    if status == 0 {
        return Err(fail("the network failed"));
    }
    if (200..300).contains(&status) {
        serde_json::from_str(&text).map_err(|e| ApiError {
            status,
            message: format!("could not read the answer: {e}"),
            field: None,
        })
    } else {
        let body: Option<ErrorBody> = serde_json::from_str(&text).ok();
        Err(ApiError {
            status,
            message: body
                .as_ref()
                .map(|b| b.error.clone())
                .unwrap_or_else(|| format!("the upload was refused ({status})")),
            field: body.and_then(|b| b.field),
        })
    }
}
