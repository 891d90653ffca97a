use super::*;
use serde_json::json;

fn err(v: Value) -> (u16, String) {
    let e = parse(&v, true, "2023-06-01", crate::clock::now_ms(), None).unwrap_err();
    (e.kind.status(), e.message)
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn a_minimal_request_is_valid() {
    let p = parse(
        &json!({"model": "claude-sonnet-4-6", "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}]}),
        true,
        "2023-06-01",
        crate::clock::now_ms(),
        None,
    )
    .unwrap();
    assert_eq!(p.turns, vec![(Role::User, "hi".to_string())]);
    assert_eq!(p.cache, None);
}

#[test]
fn missing_fields_are_named_like_the_real_api() {
    assert_eq!(
        err(json!({"model": "claude-sonnet-4-6", "messages": []})),
        (400, "max_tokens: Field required".into())
    );
    assert_eq!(
        err(json!({"max_tokens": 1, "messages": []})).1,
        "model: Field required"
    );
    assert_eq!(
        err(json!({"model": "claude-sonnet-4-6", "max_tokens": 1, "messages": []})).1,
        "messages: at least one message is required"
    );
}

#[test]
fn count_tokens_needs_no_max_tokens() {
    let p = parse(
        &json!({"model": "claude-haiku-4-5", "messages": [{"role": "user", "content": "hi"}]}),
        false,
        "2023-06-01",
        crate::clock::now_ms(),
        None,
    )
    .unwrap();
    assert!(p.input_tokens > 0);
}

#[test]
fn roles_must_start_with_user_and_alternate() {
    let first = err(json!({"model": "claude-sonnet-4-6", "max_tokens": 1,
        "messages": [{"role": "assistant", "content": "a"}]}));
    assert!(first.1.contains("first message"));
    let twice = err(json!({"model": "claude-sonnet-4-6", "max_tokens": 1,
        "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}));
    assert!(twice.1.contains("alternate"));
}

#[test]
fn an_unknown_model_is_not_found() {
    let (status, msg) = err(json!({"model": "gpt-4", "max_tokens": 1,
        "messages": [{"role": "user", "content": "a"}]}));
    assert_eq!((status, msg.as_str()), (404, "model: gpt-4"));
}

#[test]
fn a_pdf_document_costs_tokens_per_page() {
    let p = parse(
        &json!({"model": "claude-sonnet-4-6", "max_tokens": 1, "messages": [{"role": "user",
            "content": [{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(&pdf::sample(4, "T"))}},
                        {"type": "text", "text": "summarize"}]}]}),
        true,
        "2023-06-01",
        crate::clock::now_ms(),
        None,
    )
    .unwrap();
    assert_eq!(p.documents[0].pages, 4);
    assert!(p.input_tokens >= 4 * TOKENS_PER_PAGE);
}

#[test]
fn bad_documents_are_refused_with_the_apis_reasons() {
    let doc = |media: &str, data: String| {
        json!({"model": "claude-sonnet-4-6", "max_tokens": 1, "messages": [{"role": "user",
            "content": [{"type": "document", "source": {"type": "base64", "media_type": media, "data": data}}]}]})
    };
    assert_eq!(err(doc("image/png", b64(b"x"))).0, 400);
    assert!(err(doc("application/pdf", "!!!".into()))
        .1
        .contains("base64"));
    assert!(err(doc("application/pdf", b64(b"hello")))
        .1
        .contains("not valid"));
    assert!(err(doc("application/pdf", b64(&pdf::sample(101, "big"))))
        .1
        .contains("100 PDF pages"));
}

#[test]
fn a_long_enough_cache_control_prefix_is_cacheable_and_keyed_by_content() {
    let req = |sys: &str| {
        json!({"model": "claude-sonnet-4-6", "max_tokens": 1,
            "system": [{"type": "text", "text": sys, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": "question"}]})
    };
    let long = "word ".repeat(1000);
    let a = parse(
        &req(&long),
        true,
        "2023-06-01",
        crate::clock::now_ms(),
        None,
    )
    .unwrap()
    .cache
    .unwrap();
    assert!(a.tokens >= 1_024);
    assert_eq!(
        parse(
            &req(&long),
            true,
            "2023-06-01",
            crate::clock::now_ms(),
            None
        )
        .unwrap()
        .cache,
        Some(a)
    );
    let other = parse(
        &req(&format!("{long}!")),
        true,
        "2023-06-01",
        crate::clock::now_ms(),
        None,
    )
    .unwrap()
    .cache
    .unwrap();
    assert_ne!(other.key, a.key);
    assert_eq!(
        parse(
            &req("short"),
            true,
            "2023-06-01",
            crate::clock::now_ms(),
            None
        )
        .unwrap()
        .cache,
        None
    );
}

#[test]
fn empty_content_is_rejected() {
    let e = err(json!({"model": "claude-sonnet-4-6", "max_tokens": 1,
        "messages": [{"role": "user", "content": ""}]}));
    assert!(e.1.contains("non-empty"));
}

#[test]
fn markers_are_found_anywhere_in_the_prompt() {
    let p = parse(
        &json!({"model": "claude-sonnet-4-6", "max_tokens": 1, "system": "[[sim:hang]]",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "x [[sim:529]]"}]}]}),
        true,
        "2023-06-01",
        crate::clock::now_ms(),
        None,
    )
    .unwrap();
    assert_eq!(p.markers.len(), 2);
}

#[test]
fn a_file_source_reads_the_uploaded_pdf_like_its_base64() {
    let now = crate::clock::now_ms();
    let bytes = pdf::sample(3, "Filed");
    let mut files = crate::file_store::Files::default();
    let id = files.add("a.pdf".into(), "application/pdf".into(), &bytes, now, None);
    // A request reading one document from `source`, with the Files API's store (`None`: off).
    let read = |source: serde_json::Value, files: Option<&crate::file_store::Files>| {
        let body = json!({"model": "claude-sonnet-4-6", "max_tokens": 1, "messages": [{"role": "user",
            "content": [{"type": "document", "source": source}, {"type": "text", "text": "summarize"}]}]});
        parse(&body, true, "2023-06-01", now, files)
    };
    let by_file = read(json!({"type": "file", "file_id": id}), Some(&files)).unwrap();
    let inline = read(
        json!({"type": "base64", "media_type": "application/pdf", "data": b64(&bytes)}),
        Some(&files),
    )
    .unwrap();
    assert_eq!(by_file.documents, inline.documents);
    assert_eq!(by_file.input_tokens, inline.input_tokens);
    assert_eq!((by_file.file_documents, by_file.base64_documents), (1, 0));
    assert_eq!((inline.file_documents, inline.base64_documents), (0, 1));

    // Unknown, expired, of the wrong type, or where the Files API does not exist.
    let unknown = read(
        json!({"type": "file", "file_id": "file_nope"}),
        Some(&files),
    )
    .unwrap_err();
    assert_eq!(unknown.status, 404, "{}", unknown.message);
    let expired = files.add(
        "b.pdf".into(),
        "application/pdf".into(),
        &bytes,
        now - 10,
        Some(now - 1),
    );
    let gone = read(json!({"type": "file", "file_id": expired}), Some(&files)).unwrap_err();
    assert_eq!(gone.status, 404);
    let png = files.add(
        "c.png".into(),
        "image/png".into(),
        b"\x89PNG\r\n\x1a\n",
        now,
        None,
    );
    let wrong = read(json!({"type": "file", "file_id": png}), Some(&files)).unwrap_err();
    assert_eq!(wrong.status, 400);
    let absent = read(json!({"type": "file", "file_id": id}), None).unwrap_err();
    assert!(
        absent.message.contains("Input tag 'file'"),
        "{}",
        absent.message
    );
}
