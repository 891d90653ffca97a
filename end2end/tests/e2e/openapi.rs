//! OpenAPI suite (keys mode): the document the Worker serves at `/api/openapi.json` is the one
//! the DTOs make; every request example in it is accepted by the running stack; and every
//! operation of the document, called on the stack, answers a status the document lists with a
//! body its schema accepts — checked by an independent JSON Schema 2020-12 validator, strictly
//! (a field the document does not name fails), and the run covers every operation.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use end2end::api::{client, send_text};
use end2end::{eventually, pdfs, tests, StackConfig, Suite, TestStack};
use reqwest::Method;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(120);

pub fn suite() -> Suite {
    end2end::suite_with(
        "openapi",
        // An Admin API key (the simulator's) so that the reconciliation operations answer.
        StackConfig::vars(&[
            ("AUTH_MODE", "keys"),
            ("ANTHROPIC_ADMIN_KEY", "sk-ant-admin01-sim-openapi"),
        ]),
        tests![
            the_document_is_served_as_the_dtos_make_it,
            every_operation_answers_as_documented,
            refusals_answer_the_documented_error_schema,
        ],
    )
}

/// Object schemas closed to fields they do not name: `unevaluatedProperties: false` on every
/// schema with `properties` or a combinator, except a combinator's branches (a branch sees
/// only its own properties; the schema holding the combinator closes the whole, counting what
/// its branches evaluated).
fn strict(schema: &mut Value, in_branch: bool) {
    let Value::Object(m) = schema else {
        return;
    };
    let combines = ["oneOf", "anyOf", "allOf"]
        .iter()
        .any(|k| m.contains_key(*k));
    if (m.contains_key("properties") || combines)
        && !in_branch
        && !m.contains_key("additionalProperties")
        && !m.contains_key("unevaluatedProperties")
    {
        m.insert("unevaluatedProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        props.values_mut().for_each(|p| strict(p, false));
    }
    for k in ["items", "additionalProperties"] {
        if let Some(child) = m.get_mut(k) {
            strict(child, false);
        }
    }
    for k in ["oneOf", "anyOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(branches)) = m.get_mut(k) {
            let branch = k != "prefixItems";
            branches.iter_mut().for_each(|b| strict(b, branch));
        }
    }
}

/// The served document, and the operations the run has called.
struct Doc {
    d: Value,
    components: Value,
    called: Mutex<BTreeSet<(String, String)>>,
}

impl Doc {
    async fn load(s: &Arc<TestStack>) -> Doc {
        let (status, ctype, text) = send_text(client().get(s.url("/api/openapi.json"))).await;
        assert_eq!(status, 200, "{text}");
        assert!(ctype.starts_with("application/json"), "{ctype}");
        let d: Value = serde_json::from_str(&text).expect("the document is JSON");
        let mut components = d["components"].clone();
        for schema in components["schemas"]
            .as_object_mut()
            .expect("schemas")
            .values_mut()
        {
            strict(schema, false);
        }
        Doc {
            d,
            components,
            called: Mutex::default(),
        }
    }

    fn operation(&self, method: &str, path: &str) -> &Value {
        let op = &self.d["paths"][path][method];
        assert!(op.is_object(), "{method} {path} is not in the document");
        op
    }

    /// Every operation: (method, path template).
    fn operations(&self) -> BTreeSet<(String, String)> {
        let mut out = BTreeSet::new();
        for (path, item) in self.d["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                out.insert((method.clone(), path.clone()));
            }
        }
        out
    }

    /// Checks one answer of `method path` against the document: its status is listed, its
    /// content type is one the status lists, and a JSON body fits the schema, strictly.
    fn check(&self, method: &str, path: &str, status: u16, ctype: &str, text: &str) {
        self.called
            .lock()
            .unwrap()
            .insert((method.to_owned(), path.to_owned()));
        let op = self.operation(method, path);
        let answer = &op["responses"][status.to_string()];
        assert!(
            answer.is_object(),
            "{method} {path} answered {status}, which the document does not list: {text}"
        );
        let content = answer["content"].as_object().expect("content");
        let media = ctype.split(';').next().unwrap_or("").trim();
        let Some(listed) = content.get(media) else {
            panic!("{method} {path} {status} answered {media}; the document lists {content:?}");
        };
        if media != "application/json" {
            return;
        }
        let mut schema = listed["schema"].clone();
        strict(&mut schema, false);
        let body: Value = serde_json::from_str(text).expect("a JSON answer");
        let root = json!({"components": self.components, "allOf": [schema]});
        let v = jsonschema::draft202012::new(&root).expect("the schema compiles");
        let errors: Vec<String> = v
            .iter_errors(&body)
            .take(5)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {path} {status}: the answer does not fit the document: {errors:?}\n{body}"
        );
    }
}

/// A caller with an API key.
struct Caller {
    s: Arc<TestStack>,
    key: Option<String>,
}

impl Caller {
    /// Sends `method path` (the template's parameters already filled into `url_path`) with an
    /// optional JSON body; checks the answer against the document; answers (status, JSON or
    /// Null).
    async fn call(
        &self,
        doc: &Doc,
        method: &str,
        template: &str,
        url_path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let mut rb = client().request(m, self.s.url(url_path));
        if let Some(k) = &self.key {
            rb = rb.header("authorization", format!("Bearer {k}"));
        }
        if let Some(b) = body {
            rb = rb
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let (status, ctype, text) = send_text(rb).await;
        doc.check(method, template, status, &ctype, &text);
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        (status, json)
    }

    /// The same, asserting a success status.
    async fn ok(
        &self,
        doc: &Doc,
        method: &str,
        template: &str,
        url_path: &str,
        body: Option<&Value>,
    ) -> Value {
        let (status, json) = self.call(doc, method, template, url_path, body).await;
        assert!(
            (200..300).contains(&status),
            "{method} {url_path}: {status} {json}"
        );
        json
    }
}

async fn the_document_is_served_as_the_dtos_make_it(s: Arc<TestStack>) {
    let doc = Doc::load(&s).await;
    assert_eq!(doc.d["openapi"], "3.1.0");
    let version = doc.d["info"]["version"].as_str().expect("a version");
    assert_eq!(
        doc.d,
        contract::openapi::document(version),
        "the served document is stale: rebuild"
    );
    // Public: no key needed, and cacheable.
    let resp = client()
        .get(s.url("/api/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("cache-control").is_some());
    let ops = doc.operations();
    assert_eq!(ops.len(), contract::openapi::ROUTES.len());
    for r in contract::openapi::ROUTES {
        assert!(ops.contains(&(r.method.to_owned(), r.path.to_owned())));
    }
    assert!(doc.d["webhooks"]["jobEnded"]["post"].is_object());
    // The check is strict: a field the document does not name, or a missing one, fails.
    let ack = json!({"jobId": "j", "status": "queued", "pollUrl": "/jobs/j"});
    doc.check("post", "/jobs", 202, "application/json", &ack.to_string());
    for bad in [
        json!({"jobId": "j", "status": "queued", "pollUrl": "/jobs/j", "extra": 1}),
        json!({"jobId": "j", "status": "queued"}),
    ] {
        let failed = std::panic::catch_unwind(|| {
            doc.check("post", "/jobs", 202, "application/json", &bad.to_string())
        });
        assert!(failed.is_err(), "{bad} passed the check");
    }
}

fn example_of(doc: &Doc, method: &str, path: &str) -> Option<Value> {
    let ex = &doc.operation(method, path)["requestBody"]["content"]["application/json"]["example"];
    (!ex.is_null()).then(|| ex.clone())
}

async fn status_of(admin: &Caller, id: &str) -> String {
    let (_, v) = end2end::api::send_json(client().get(admin.s.url(&format!("/jobs/{id}"))).header(
        "authorization",
        format!("Bearer {}", admin.key.as_deref().unwrap()),
    ))
    .await;
    v["status"].as_str().unwrap_or("").to_owned()
}

async fn every_operation_answers_as_documented(s: Arc<TestStack>) {
    let doc = Doc::load(&s).await;
    doc.check(
        "get",
        "/api/openapi.json",
        200,
        "application/json",
        &doc.d.to_string(),
    );
    let admin = Caller {
        s: s.clone(),
        key: Some(s.issue_key("openapi-admin", true).await),
    };
    let anyone = Caller {
        s: s.clone(),
        key: None,
    };
    anyone
        .ok(&doc, "get", "/api/models", "/api/models", None)
        .await;

    // 1. Every request example of an operation without path parameters, as documented.
    let mut answers = std::collections::HashMap::new();
    for (method, path) in doc.operations() {
        if path.contains('{') {
            continue;
        }
        if let Some(ex) = example_of(&doc, &method, &path) {
            let v = admin.ok(&doc, &method, &path, &path, Some(&ex)).await;
            answers.insert((method, path), v);
        }
    }
    assert!(answers.len() >= 7, "examples sent: {:?}", answers.keys());
    let feedback_id = answers[&("post".into(), "/feedback".into())]["id"]
        .as_str()
        .expect("feedback id")
        .to_owned();
    let key_id = answers[&("post".into(), "/api/keys".into())]["id"]
        .as_str()
        .expect("key id")
        .to_owned();
    let pause = example_of(&doc, "put", "/api/pauses").unwrap();

    // 2. The fixtures the path parameters need: a completed job with a webhook, two failed
    // jobs (one to replay, one to discard), an upload, and a job to cancel.
    let submit = |body: Value| {
        let admin = &admin;
        let doc = &doc;
        async move {
            let ack = admin.ok(doc, "post", "/jobs", "/jobs", Some(&body)).await;
            ack["jobId"].as_str().expect("jobId").to_owned()
        }
    };
    let hooked = submit(json!({"prompt": "Say hello to the OpenAPI suite.",
                               "callback_url": "http://127.0.0.1:9/hook"}))
    .await;
    let failed: Vec<String> = vec![
        submit(json!({"prompt": "Refuse me [[sim:400x1]]"})).await,
        submit(json!({"prompt": "Refuse me too [[sim:400x1]]"})).await,
    ];
    let files = vec![("plan.pdf".to_owned(), pdfs::make("Plan", 1))];
    let (status, ack) = s
        .key(admin.key.as_deref())
        .upload(&files, &[("mode", "batch")])
        .await;
    assert_eq!(status, 202, "{ack}");
    let upload = ack["batchId"].as_str().unwrap().to_owned();
    {
        let answer = ack.to_string();
        doc.check("post", "/batches", status, "application/json", &answer);
    }
    for id in std::iter::once(&hooked).chain(&failed) {
        let want = if id == &hooked { "completed" } else { "failed" };
        eventually(&format!("job {id} {want}"), WAIT, || async {
            (status_of(&admin, id).await == want).then_some(())
        })
        .await;
    }

    // 3. The operations with path parameters.
    let job = |p: &str, id: &str| p.replace("{id}", id);
    admin
        .ok(
            &doc,
            "get",
            "/api/feedback/{id}",
            &job("/api/feedback/{id}", &feedback_id),
            None,
        )
        .await;
    for p in ["/jobs/{id}", "/jobs/{id}/result"] {
        admin.ok(&doc, "get", p, &job(p, &hooked), None).await;
    }
    let p = "/api/webhooks/{id}/resend";
    admin.ok(&doc, "post", p, &job(p, &hooked), None).await;
    let p = "/api/dlq/{id}/replay";
    let edit = example_of(&doc, "post", p).expect("the replay's example");
    admin
        .ok(&doc, "post", p, &job(p, &failed[0]), Some(&edit))
        .await;
    let p = "/api/dlq/{id}/discard";
    admin.ok(&doc, "post", p, &job(p, &failed[1]), None).await;
    for (m, p) in [("get", "/batches/{id}"), ("post", "/batches/{id}/cancel")] {
        admin.ok(&doc, m, p, &job(p, &upload), None).await;
    }
    let to_cancel = submit(json!({"prompt": "Cancel me before I run.", "priority": "bulk"})).await;
    let p = "/jobs/{id}/cancel";
    admin.ok(&doc, "post", p, &job(p, &to_cancel), None).await;
    let p = "/api/keys/{id}";
    admin.ok(&doc, "delete", p, &job(p, &key_id), None).await;
    let p = "/api/pauses/{scope}/{value}";
    let resume = p
        .replace("{scope}", pause["scope"].as_str().unwrap())
        .replace("{value}", pause["value"].as_str().unwrap());
    let resumed = admin.ok(&doc, "delete", p, &resume, None).await;
    assert_eq!(resumed["resumed"]["value"], pause["value"], "{resumed}");

    // A comparison with the bill first, so that the last one can be read.
    admin
        .ok(
            &doc,
            "post",
            "/api/reconciliation/run",
            "/api/reconciliation/run",
            None,
        )
        .await;

    // 4. Every other operation, without a body.
    let called = doc.called.lock().unwrap().clone();
    for (method, path) in doc.operations() {
        if called.contains(&(method.clone(), path.clone())) {
            continue;
        }
        assert!(!path.contains('{'), "{method} {path} has no fixture");
        let required = doc.operation(&method, &path)["requestBody"]["required"] == true;
        assert!(!required, "{method} {path} needs a body and has no example");
        admin.ok(&doc, &method, &path, &path, None).await;
    }
    let called = doc.called.lock().unwrap().clone();
    let missed: Vec<_> = doc.operations().difference(&called).cloned().collect();
    assert!(missed.is_empty(), "operations never called: {missed:?}");
}

async fn refusals_answer_the_documented_error_schema(s: Arc<TestStack>) {
    let doc = Doc::load(&s).await;
    let user = Caller {
        s: s.clone(),
        key: Some(s.issue_key("openapi-user", false).await),
    };
    let nobody = Caller {
        s: s.clone(),
        key: None,
    };
    let (status, e) = nobody.call(&doc, "get", "/jobs", "/jobs", None).await;
    assert_eq!(status, 401, "{e}");
    let (status, e) = user.call(&doc, "get", "/api/dlq", "/api/dlq", None).await;
    assert_eq!(status, 403, "{e}");
    let (status, e) = user
        .call(&doc, "post", "/jobs", "/jobs", Some(&json!({"prompt": 7})))
        .await;
    assert_eq!((status, e["field"].as_str()), (400, Some("prompt")), "{e}");
    let (status, e) = user
        .call(&doc, "get", "/jobs/{id}", "/jobs/job_nope", None)
        .await;
    assert_eq!(status, 404, "{e}");
    let (status, e) = user
        .call(&doc, "get", "/api/usage", "/api/usage?from=yesterday", None)
        .await;
    assert_eq!((status, e["field"].as_str()), (400, Some("from")), "{e}");
    let (status, e) = user
        .call(&doc, "get", "/jobs", "/jobs?limit=1000", None)
        .await;
    assert_eq!(status, 400, "{e}");
}
