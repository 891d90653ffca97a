//! The runtime's Web Crypto (`crypto.subtle`), for what the other routes sign: a Blob's SHA-256
//! (a Bedrock body carrying a PDF, hashed where it is — in JS memory) and an RSA SHA-256
//! signature (a service account's JWT for Vertex AI). Reached through `js_sys::Reflect`, so no
//! further `web-sys` features are compiled.

use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use worker::web_sys;

fn subtle() -> Result<Object, JsValue> {
    let crypto = Reflect::get(&js_sys::global(), &"crypto".into())?;
    Ok(Reflect::get(&crypto, &"subtle".into())?.into())
}

/// Calls `crypto.subtle[name](...args)` and awaits it.
async fn call(name: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let subtle = subtle()?;
    let f: Function = Reflect::get(&subtle, &name.into())?.into();
    let promise: Promise = f.apply(&subtle, &args.iter().collect::<Array>())?.into();
    JsFuture::from(promise).await
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of a Blob, hex.
pub async fn blob_sha256(blob: &web_sys::Blob) -> Result<String, JsValue> {
    let buffer = JsFuture::from(blob.array_buffer()).await?;
    let out = call("digest", &["SHA-256".into(), buffer]).await?;
    Ok(hex(&Uint8Array::new(&out).to_vec()))
}

/// RSASSA-PKCS1-v1_5 with SHA-256 of `data` by a PKCS #8 private key (DER).
pub async fn rsa_sha256_sign(key_der: &[u8], data: &[u8]) -> Result<Vec<u8>, JsValue> {
    let algorithm = Object::new();
    Reflect::set(&algorithm, &"name".into(), &"RSASSA-PKCS1-v1_5".into())?;
    Reflect::set(&algorithm, &"hash".into(), &"SHA-256".into())?;
    let usages = Array::of1(&"sign".into());
    let key = call(
        "importKey",
        &[
            "pkcs8".into(),
            Uint8Array::from(key_der).into(),
            algorithm.clone().into(),
            false.into(),
            usages.into(),
        ],
    )
    .await?;
    let out = call(
        "sign",
        &[algorithm.into(), key, Uint8Array::from(data).into()],
    )
    .await?;
    Ok(Uint8Array::new(&out).to_vec())
}
