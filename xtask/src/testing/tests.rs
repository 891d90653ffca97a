use super::*;

#[test]
fn every_suite_of_end2end_is_known_by_name_and_every_suite_file_is_in_the_binary() {
    let names = suite_names().unwrap();
    for s in [
        "api", "browser", "jobs", "chaos", "models", "abuse", "races",
    ] {
        assert!(names.iter().any(|n| n == s), "{s} missing from {names:?}");
    }
    // A suite's file that the binary does not declare would never be compiled, nor run.
    let main = std::fs::read_to_string(suites_dir().join("main.rs")).unwrap();
    for entry in std::fs::read_dir(suites_dir()).unwrap().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(module) = file.strip_suffix(".rs").filter(|m| *m != "main") else {
            continue;
        };
        assert!(
            main.contains(&format!("mod {module};")),
            "{file} is not a module of end2end/tests/e2e/main.rs"
        );
    }
}

#[test]
fn the_summary_adds_up_every_result_line_and_skips_empty_binaries() {
    let ran = |label: &str, line: &str, success| Ran {
        label: label.into(),
        suite: false,
        span: None,
        results: vec![line.into()],
        success,
        took: Duration::ZERO,
    };
    let (text, passed, failed) = summary(&[
        ran("a", "test result: ok. 3 passed; 0 failed; 0 ignored", true),
        ran("b", "test result: ok. 0 passed; 0 failed; 0 ignored", true),
        ran(
            "c",
            "test result: FAILED. 1 passed; 2 failed; 0 ignored",
            false,
        ),
    ]);
    assert_eq!((passed, failed), (4, 2));
    assert!(!text.contains("  b "), "{text}");
    assert!(text.ends_with("4 passed, 2 failed"), "{text}");
}

#[test]
fn cargo_labels_name_the_crate_and_the_target() {
    assert_eq!(
        label("unittests src/lib.rs (target/debug/deps/pipeline-0123abcd)"),
        "pipeline unittests src/lib.rs"
    );
    assert_eq!(strip_ansi("\x1b[1;32mok\x1b[0m"), "ok");
}
