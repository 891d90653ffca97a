use std::collections::BTreeSet;

use super::*;

fn doc() -> Value {
    document("0.0.0-test")
}

fn source(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"))
}

/// `(method, path)` of every `.route(...)` call of the Worker's router, read from its source.
fn router_routes() -> BTreeSet<(String, String)> {
    let src = source("worker/src/routes/mod.rs");
    let mut out = BTreeSet::new();
    let mut rest = src.as_str();
    while let Some(i) = rest.find(".route(") {
        rest = &rest[i + ".route(".len()..];
        // The call's text, up to its balanced closing parenthesis.
        let mut depth = 1;
        let end = rest
            .char_indices()
            .find_map(|(j, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(j)
            })
            .expect("a balanced .route(...) call");
        let call = &rest[..end];
        let path = call.split('"').nth(1).expect("a path literal").to_owned();
        for method in ["get", "post", "put", "delete", "patch"] {
            let called = call.match_indices(&format!("{method}(")).any(|(k, _)| {
                let before = call[..k].chars().last();
                !matches!(before, Some(c) if c.is_alphanumeric() || c == '_')
            });
            if called {
                out.insert((method.to_owned(), path.clone()));
            }
        }
        rest = &rest[end..];
    }
    out
}

#[test]
fn the_table_has_every_route_of_the_router_and_no_other() {
    let router = router_routes();
    assert!(router.len() > 30, "the router parse found {router:?}");
    let table: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|r| (r.method.to_owned(), r.path.to_owned()))
        .collect();
    let undocumented: Vec<_> = router.difference(&table).collect();
    let unknown: Vec<_> = table.difference(&router).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from the OpenAPI table: {undocumented:?}"
    );
    assert!(
        unknown.is_empty(),
        "OpenAPI routes the router lacks: {unknown:?}"
    );
    assert_eq!(table.len(), ROUTES.len(), "a route is listed twice");
}

#[test]
fn the_router_parse_sees_chained_and_qualified_methods() {
    let r = router_routes();
    for (m, p) in [
        ("post", "/api/keys"),
        ("get", "/api/keys"),
        ("delete", "/api/keys/{id}"),
        ("get", "/batches"),
        ("post", "/batches"),
        ("delete", "/api/pauses/{scope}/{value}"),
    ] {
        assert!(r.contains(&(m.to_owned(), p.to_owned())), "{m} {p}");
    }
    assert!(!r.contains(&("get".to_owned(), "/api/keys/{id}".to_owned())));
}

#[test]
fn path_parameters_match_the_templates_and_operation_ids_are_unique() {
    let mut ids = BTreeSet::new();
    for r in ROUTES {
        assert!(
            ids.insert(r.operation_id),
            "operationId {} twice",
            r.operation_id
        );
        let in_template: BTreeSet<&str> = r
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        let declared: BTreeSet<&str> = r
            .params
            .iter()
            .filter(|p| p.place == In::Path)
            .map(|p| p.name)
            .collect();
        assert_eq!(in_template, declared, "{} {}", r.method, r.path);
        assert!(
            r.answers.iter().all(|a| (200..300).contains(&a.status)) || r.path == "/api/health",
            "{}: answers are the success statuses",
            r.path
        );
    }
}

fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.insert(r.clone());
            }
            m.values().for_each(|x| refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[test]
fn every_reference_resolves_and_every_schema_is_used() {
    let d = doc();
    let schemas = d["components"]["schemas"].as_object().unwrap();
    let mut found = BTreeSet::new();
    refs(&d, &mut found);
    for r in &found {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("a reference outside the components: {r}"));
        assert!(schemas.contains_key(name), "dangling $ref {r}");
    }
    for name in schemas.keys() {
        assert!(
            found.contains(&format!("#/components/schemas/{name}")),
            "schema {name} is never referenced"
        );
    }
}

#[test]
fn the_document_is_openapi_3_1_with_operations_for_every_route() {
    let d = doc();
    assert_eq!(d["openapi"], "3.1.0");
    assert_eq!(d["info"]["version"], "0.0.0-test");
    for r in ROUTES {
        let op = &d["paths"][r.path][r.method];
        assert_eq!(op["operationId"], r.operation_id);
        let responses = op["responses"].as_object().unwrap();
        for a in r.answers {
            assert!(responses.contains_key(&a.status.to_string()));
        }
        if r.access != Access::Public {
            assert!(responses.contains_key("401"), "{}", r.path);
        }
        if r.access == Access::Admin {
            assert!(responses.contains_key("403"), "{}", r.path);
        }
    }
    // Every schema, the components included, compiles as JSON Schema 2020-12.
    let whole = json!({"components": d["components"], "$defs": {}});
    for (name, _) in d["components"]["schemas"].as_object().unwrap() {
        let s = json!({"components": whole["components"], "$ref": format!("#/components/schemas/{name}")});
        jsonschema::draft202012::new(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// The DTO modules' answer types: every one must be in the document (the queue's message is
/// not an HTTP body).
#[test]
fn every_dto_is_in_the_document() {
    let d = doc();
    let schemas = d["components"]["schemas"].as_object().unwrap();
    // The queue's message is no HTTP body; a Spend is flattened into the views that carry it,
    // and SpendColumns is how D1 answers one (rows, not bodies).
    let not_http = ["QueueMessage", "Spend", "SpendColumns"];
    let mut missing = Vec::new();
    for file in [
        "pipeline/src/dto.rs",
        "pipeline/src/dto/machinery.rs",
        "pipeline/src/dto/requests.rs",
    ] {
        let src = source(file);
        let mut derives_serde = false;
        for line in src.lines() {
            let line = line.trim();
            if line.starts_with("#[derive(") {
                derives_serde = line.contains("Serialize") || line.contains("Deserialize");
            }
            let name = line
                .strip_prefix("pub struct ")
                .or_else(|| line.strip_prefix("pub enum "))
                .and_then(|r| r.split(|c: char| !c.is_alphanumeric() && c != '_').next());
            if let Some(name) = name {
                if derives_serde && !not_http.contains(&name) && !schemas.contains_key(name) {
                    missing.push(format!("{file}: {name}"));
                }
                derives_serde = false;
            }
        }
    }
    assert!(
        missing.is_empty(),
        "DTOs missing from the document: {missing:?}"
    );
    // And every type a handler answers by name (`Json(Type {..})`, `Json(Type::…)`).
    let mut answered = BTreeSet::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../worker/src/routes");
    for entry in std::fs::read_dir(dir).unwrap() {
        let src = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for (i, _) in src.match_indices("Json(") {
            let rest = &src[i + 5..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                answered.insert(name);
            }
        }
    }
    assert!(answered.len() > 10, "{answered:?}");
    let absent: Vec<_> = answered
        .iter()
        .filter(|n| !schemas.contains_key(n.as_str()))
        .collect();
    assert!(absent.is_empty(), "answered but not documented: {absent:?}");
}

fn validate(d: &Value, schema: &Value, instance: &Value) -> Result<(), String> {
    let root = json!({"components": d["components"], "allOf": [schema]});
    let v = jsonschema::draft202012::new(&root).map_err(|e| e.to_string())?;
    let errors: Vec<String> = v.iter_errors(instance).map(|e| e.to_string()).collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

#[test]
fn every_request_example_fits_its_schema_and_its_parser() {
    let d = doc();
    let now = 1_800_000_000_000;
    let mut checked = 0;
    for r in ROUTES {
        let Body::Json { example, .. } = r.body else {
            continue;
        };
        let body = &d["paths"][r.path][r.method]["requestBody"]["content"]["application/json"];
        let ex = example();
        assert_eq!(body["example"], ex);
        validate(&d, &body["schema"], &ex).unwrap_or_else(|e| panic!("{}: {e}", r.path));
        let bytes = serde_json::to_vec(&ex).unwrap();
        let parsed = match r.operation_id {
            "submitFeedback" => pipeline::feedback::parse_input(&bytes, now).map(drop),
            "submitJob" | "callClaude" => pipeline::prompt::parse_input(&bytes, now).map(drop),
            "createKey" => pipeline::identity::parse_key_input(&bytes).map(drop),
            "setBudget" => BudgetSetting::parse(&bytes).map(drop),
            "setTagBudget" => pipeline::ops::budgets::TagBudgetSetting::parse(&bytes).map(drop),
            "pause" => pipeline::pause::parse_request(&bytes).map(drop),
            "replayDeadLetter" => ReplayEdit::parse(&bytes, now).map(drop),
            "actInBulk" => pipeline::ops::bulk::BulkRequest::parse(&bytes, "admin").map(drop),
            "replayDeadLetters" => serde_json::from_slice::<DlqFilter>(&bytes)
                .map_err(|e| pipeline::error::ApiError::bad_request("x", e.to_string(), None))
                .and_then(|f| f.validate()),
            other => panic!("no parser named for {other}'s example"),
        };
        parsed.unwrap_or_else(|e| panic!("{}: {e:?}", r.path));
        checked += 1;
    }
    assert_eq!(checked, 10);
}

#[test]
fn a_request_schema_refuses_what_the_api_refuses() {
    let d = doc();
    let schema =
        &d["paths"]["/feedback"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert!(validate(&d, schema, &json!({"text": "ok"})).is_ok());
    assert!(
        validate(&d, schema, &json!({"mode": "sync"})).is_err(),
        "text is required"
    );
    assert!(validate(&d, schema, &json!({"text": "x", "mode": "later"})).is_err());
    let answer = &d["paths"]["/jobs/{id}"]["get"]["responses"]["200"]["content"]
        ["application/json"]["schema"];
    assert!(validate(&d, answer, &json!({"id": "j"})).is_err());
}

#[test]
fn answer_and_request_schemas_of_one_name_never_clash() {
    let d = doc();
    let schemas = d["components"]["schemas"].as_object().unwrap();
    // A budget setting is answered with every field and read with any absent.
    assert!(schemas.contains_key("BudgetSetting") && schemas.contains_key("BudgetSettingInput"));
    let put = &d["paths"]["/api/usage/budget"]["put"];
    assert_eq!(
        put["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/BudgetSettingInput"
    );
    assert_eq!(
        put["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/BudgetSetting"
    );
}
