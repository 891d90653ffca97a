use super::*;
use proptest::prelude::*;

#[test]
fn page_objects_are_counted_and_a_pdf_that_hides_them_is_taken_at_the_api_maximum() {
    let pdf = b"%PDF-1.7 <</Type /Pages /Count 3>> <</Type /Page>> <</Type/Page>> <</Type\n/Page /Parent 2 0 R>>";
    assert_eq!(pages_at_most(pdf), 3);
    assert_eq!(
        pages_at_most(b"%PDF-1.7 <</Type /ObjStm /N 40>> stream...endstream"),
        MAX_PAGES
    );
    let many = "<</Type /Page>>".repeat(150);
    assert_eq!(pages_at_most(many.as_bytes()), MAX_PAGES);
    assert_eq!(pages_at_most(b"%PDF-1.4 /Type"), MAX_PAGES);
}

#[test]
fn counts_outside_one_to_a_hundred_are_refused() {
    assert_eq!(check_count(0).unwrap_err().status, 400);
    assert!(check_count(1).is_ok());
    assert!(check_count(100).is_ok());
    let e = check_count(101).unwrap_err();
    assert!(
        e.body.error.contains("between 1 and 100 files"),
        "{}",
        e.body.error
    );
}

#[test]
fn a_file_must_be_a_non_empty_pdf_within_the_size() {
    assert_eq!(
        check_file("a.pdf", b"").unwrap_err().body.code,
        "empty_file"
    );
    assert_eq!(
        check_file("a.pdf", b"\x89PNG\r\n").unwrap_err().body.code,
        "not_a_pdf"
    );
    assert!(check_file("a.pdf", b"%PDF-1.7\n...").is_ok());
    let big = check_size("big.pdf", MAX_FILE_BYTES + 1).unwrap_err();
    assert_eq!(
        (big.status, big.body.code.as_str()),
        (413, "file_too_large")
    );
    assert!(check_size("ok.pdf", MAX_FILE_BYTES).is_ok());
    assert_eq!(check_total(MAX_UPLOAD_BYTES + 1).unwrap_err().status, 413);
}

#[test]
fn the_base64_of_the_largest_file_fits_the_apis_request() {
    let base64 = MAX_FILE_BYTES.div_ceil(3) * 4;
    assert!(base64 + 64 * 1024 < 32 * 1024 * 1024);
}

#[test]
fn names_are_cleaned_for_display() {
    assert_eq!(display_name("../../x.pdf"), "x.pdf");
    assert_eq!(display_name("C:\\Users\\me\\report.pdf"), "report.pdf");
    assert_eq!(display_name("a\u{0}b\u{1b}[31m.pdf"), "ab[31m.pdf");
    assert_eq!(display_name("   "), "document.pdf");
    assert_eq!(display_name(".."), "document.pdf");
    assert_eq!(display_name(&"é".repeat(400)).chars().count(), 255);
}

#[test]
fn templates_parse_and_default_to_summary() {
    assert_eq!(Template::parse(None).unwrap(), Template::Summary);
    assert_eq!(Template::parse(Some("brief")).unwrap(), Template::Brief);
    assert_eq!(Template::parse(Some("poem")).unwrap_err().status, 400);
}

#[test]
fn the_document_comes_first_behind_cache_breakpoints() {
    let r = request("claude-sonnet-5-5", Template::Brief, "JVBERi0=".into());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["system"][0]["cache_control"]["type"], "ephemeral");
    let blocks = &v["messages"][0]["content"];
    assert_eq!(blocks[0]["type"], "document");
    assert_eq!(blocks[0]["source"]["media_type"], "application/pdf");
    assert_eq!(blocks[0]["cache_control"]["type"], "ephemeral");
    assert_eq!(blocks[1]["type"], "text");
    // The template's 500 plus room for the thinking Sonnet 5.5 does by default.
    assert_eq!(r.max_tokens, 500 + crate::models::THINKING_ROOM);
    assert_eq!(v["output_config"]["effort"], "low");
    assert_eq!(v["output_config"]["format"]["type"], "json_schema");
    assert!(v.get("temperature").is_none());
    assert_eq!(
        crate::tokens::estimate_request(&r),
        None,
        "documents are counted by the API"
    );
}

#[test]
fn an_extraction_is_read_through_fences_and_commentary() {
    let raw = "```json\n{\"title\":\"Q3\",\"summary\":\"Growth.\",\"key_points\":[\"a\"],\
               \"entities\":[{\"name\":\"ACME\"}],\"page_count\":3}\n```\nHope this helps!";
    let e = parse_extraction(raw).unwrap();
    assert_eq!(e.title, "Q3");
    assert_eq!(e.entities, vec!["ACME".to_string()]);
    assert_eq!(e.page_count, Some(3));
    assert!(parse_extraction("no json here").is_err());
    assert!(parse_extraction("{\"title\":\"x\",\"summary\":\"  \"}").is_err());
}

proptest! {
    #[test]
    fn a_display_name_has_no_path_separator_or_control_character(raw in "\\PC{0,300}|[\\x00-\\x1f/\\\\.a-z]{0,50}") {
        let n = display_name(&raw);
        prop_assert!(!n.is_empty());
        prop_assert!(!n.contains('/') && !n.contains('\\'));
        prop_assert!(!n.chars().any(char::is_control));
        prop_assert!(n.chars().count() <= MAX_NAME_CHARS);
        prop_assert!(n != "..");
    }
}

/// A PDF's bytes made of the pieces a page count turns on.
fn pdf_like() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"/Type".to_vec()),
        Just(b"/Type /Page".to_vec()),
        Just(b"/Type\n/Pages".to_vec()),
        Just(b"/Page".to_vec()),
        Just(b"/Pages".to_vec()),
        Just(b"s".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"/Typ".to_vec()),
        Just(b"<<".to_vec()),
        Just(vec![b' '; 300]),
        any::<u8>().prop_map(|b| vec![b]),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|p| {
        let mut b = b"%PDF-1.7\n".to_vec();
        b.extend(p.concat());
        b
    })
}

proptest! {
    #[test]
    fn a_pdf_streamed_in_any_chunks_counts_as_the_whole_file(
        bytes in pdf_like(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..64),
    ) {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut scan = Scan::default();
        let mut from = 0;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            scan.feed("f.pdf", &bytes[from..cut]).unwrap();
            from = cut;
        }
        prop_assert_eq!(scan.len(), bytes.len() as u64);
        prop_assert_eq!(scan.finish("f.pdf").unwrap(), pages_at_most(&bytes));
    }
}

#[test]
fn a_streamed_file_is_refused_as_the_whole_one_would_be() {
    let code = |chunks: &[&[u8]]| {
        let mut scan = Scan::default();
        for c in chunks {
            if let Err(e) = scan.feed("a.pdf", c) {
                return e.body.code;
            }
        }
        scan.finish("a.pdf")
            .map(|_| "ok".into())
            .unwrap_or_else(|e| e.body.code)
    };
    assert_eq!(code(&[]), "empty_file");
    assert_eq!(code(&[b"\x89P", b"NG\r\n"]), "not_a_pdf");
    assert_eq!(code(&[b"%P", b"DF", b"-1.7"]), "ok");
    let big = vec![b'x'; MAX_FILE_BYTES as usize];
    assert_eq!(code(&[b"%PDF-", &big]), "file_too_large");
    // A page object split anywhere is still one.
    let pdf = b"%PDF-1.7 <</Type /Page>>";
    for cut in 0..pdf.len() {
        let mut scan = Scan::default();
        scan.feed("a.pdf", &pdf[..cut]).unwrap();
        scan.feed("a.pdf", &pdf[cut..]).unwrap();
        assert_eq!(scan.finish("a.pdf").unwrap(), 1, "cut at {cut}");
    }
}
