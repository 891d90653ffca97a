//! Models suite: every kind of work on every current model, against a simulator that answers as
//! today's API does model by model (adaptive thinking by default, the settings each model
//! refuses, per-generation tokenizers, retired models). A faithful client sends nothing a
//! model refuses: the simulator counts **0 requests refused for their shape**. And a paid
//! answer that cannot be used (a refusal, thinking only, a body that does not decode) fails its
//! job once, billed once, never retried.

use std::sync::Arc;
use std::time::Duration;

use end2end::api::assert_error;
use end2end::{eventually, pdfs, rollout_user, tests, Suite, TestStack};
use serde_json::json;

/// The current models of the docs' overview, plus one 4.x model (an alias of a dated snapshot,
/// with the older tokenizer, no effort parameter and thinking off by default).
const MODELS: [&str; 7] = [
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-opus-5-5",
    "claude-fable-5-2",
    "claude-mythos-5-2",
    "claude-sonnet-5",
    "claude-haiku-4-5",
];

/// The operator's refusal fallback this suite configures (`REFUSAL_FALLBACKS`).
const OPERATOR_FALLBACK: (&str, &str) = ("claude-mythos-5-2", "claude-opus-5-5");

pub fn suite() -> Suite {
    let fallbacks = format!("{}={}", OPERATOR_FALLBACK.0, OPERATOR_FALLBACK.1);
    end2end::suite_with(
        "models",
        end2end::StackConfig::vars(&[("REFUSAL_FALLBACKS", &fallbacks)]),
        tests![
            every_kind_of_work_completes_on_every_current_model,
            a_refusal_fails_its_job_once_billed_once_never_retried,
            a_refusal_before_any_output_costs_nothing_on_either_side,
            a_refused_job_is_retried_once_on_its_fallback_billed_per_attempt,
            a_batch_job_refused_falls_back_to_a_later_batch_on_the_operators_fallback,
            a_refusal_on_the_fallback_too_fails_the_job_with_both_attempts_billed,
            a_fallback_model_must_be_another_current_model,
            fast_mode_is_priced_at_its_rates_and_counted_apart,
            fast_mode_is_refused_where_it_is_not_offered_and_reserved_at_its_price,
            a_thinking_only_answer_fails_its_job_once_billed_once,
            an_unknown_block_type_and_stop_reason_do_not_break_the_job,
            an_undecodable_paid_answer_fails_once_with_its_cost_recorded,
            a_retired_or_unknown_model_is_refused_at_submission_everywhere,
            settings_a_model_refuses_are_400s_and_another_model_runs_them,
            the_catalog_is_served_with_prices_and_standing,
            what_api_version_2026_10_21_refuses_is_a_400_that_stores_nothing,
            every_request_speaks_api_version_2026_10_21,
            no_request_was_refused_for_its_shape,
        ],
    )
}

/// The catalog watch (issue 33, part 6) on a stack of its own: it drops a model at the
/// simulator, which no other suite's work may meet.
pub fn catalog() -> Suite {
    end2end::suite(
        "catalog",
        tests![
            the_catalog_matches_the_apis_list_on_a_fresh_stack,
            a_model_added_and_one_dropped_at_the_api_are_noticed_and_the_dropped_one_refused,
            a_job_on_a_deprecated_model_is_warned_and_counted_on_the_dashboard,
        ],
    )
}

const WATCHER: &str = "catalog-ops";

async fn the_catalog_matches_the_apis_list_on_a_fresh_stack(s: Arc<TestStack>) {
    let view = s.user(WATCHER).post_ok("/api/models/check").await;
    let report = &view["report"];
    assert!(report["listed"].as_u64().unwrap() >= 7, "{view}");
    assert_eq!(report["unknown"], json!([]), "{view}");
    assert_eq!(report["missing"], json!([]), "{view}");
    assert_eq!(
        report["differences"],
        json!([]),
        "limits and capabilities agree: {view}"
    );
    assert_eq!(view["notices"], json!([]), "{view}");
    assert!(s.sim_calls("models 200") >= 1);
}

async fn a_model_added_and_one_dropped_at_the_api_are_noticed_and_the_dropped_one_refused(
    s: Arc<TestStack>,
) {
    let user = "catalog-user";
    // A job on Sonnet 5 waits behind a pause of its model, queued.
    let (status, body) = s
        .user(WATCHER)
        .put_json(
            "/api/pauses",
            &json!({"scope": "model", "value": "claude-sonnet-5"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let held = s
        .user(user)
        .submit_job(
            &json!({"prompt": "Held, then its model goes away", "model": "claude-sonnet-5"}),
        )
        .await;
    // The API (the simulator's control) lists a new model, drops Sonnet 5 and states a larger
    // output limit for Opus 5.5.
    let knobs = json!({
        "models_added": [
            {"id": "claude-nova-6", "display_name": "Claude Nova 6",
             "created_at": "2026-12-05T00:00:00Z", "max_input_tokens": 2_000_000,
             "max_tokens": 256_000},
            {"id": "claude-opus-5-5", "display_name": "Claude Opus 5.5",
             "created_at": "2026-09-22T00:00:00Z", "max_input_tokens": 1_000_000,
             "max_tokens": 256_000}
        ],
        "models_dropped": ["claude-sonnet-5"]
    });
    let response = end2end::api::client()
        .patch(format!("{}/_sim/config", s.sim_url))
        .json(&knobs)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let view = s.user(WATCHER).post_ok("/api/models/check").await;
    let report = &view["report"];
    assert_eq!(report["unknown"][0]["id"], "claude-nova-6", "{view}");
    assert_eq!(report["missing"], json!(["claude-sonnet-5"]), "{view}");
    assert_eq!(
        report["differences"][0]["model"], "claude-opus-5-5",
        "{view}"
    );
    assert_eq!(report["differences"][0]["field"], "max_tokens", "{view}");
    let texts: Vec<&str> = view["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("claude-nova-6")
            && t.contains("not usable until the catalog knows its prices")),
        "{texts:?}"
    );
    // New jobs naming the dropped model are refused before anything is stored.
    for (body, field) in [
        (json!({"prompt": "x", "model": "claude-sonnet-5"}), "model"),
        (
            json!({"prompt": "x", "model": "claude-opus-5-5", "fallback_model": "claude-sonnet-5"}),
            "fallback_model",
        ),
    ] {
        let (status, err) = s.user("catalog-refused").post_json("/jobs", &body).await;
        assert_error(status, &err, 400, "unknown_model");
        assert_eq!(err["field"], field, "{err}");
        assert!(
            err["error"].as_str().unwrap().contains("no longer listed"),
            "{err}"
        );
    }
    let (status, err) = s
        .user("catalog-refused")
        .post_json(
            "/feedback",
            &json!({"text": "x", "model": "claude-sonnet-5"}),
        )
        .await;
    assert_error(status, &err, 400, "unknown_model");
    let listed = s.user("catalog-refused").get_ok("/jobs").await;
    assert_eq!(listed["items"], json!([]), "nothing stored: {listed}");
    // The one already queued fails before any call once its model is resumed.
    let (status, _) = s
        .user(WATCHER)
        .delete("/api/pauses/model/claude-sonnet-5")
        .await;
    assert_eq!(status, 200);
    let j = s.user(user).all_end(1).await.remove(0);
    assert_eq!(j["status"], "failed", "{j}");
    assert!(
        j["error"].as_str().unwrap().contains("no longer listed"),
        "{j}"
    );
    assert_eq!(s.billed(&held), 0, "never sent");
    // The Dashboard shows it: a warning for the dropped model, a notice for the new one.
    let metrics = s.user(WATCHER).get_ok("/api/metrics").await;
    let warnings: Vec<&str> = metrics["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("claude-sonnet-5 is no longer listed")),
        "{warnings:?}"
    );
    assert!(
        metrics["models"]["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["level"] == "info" && n["model"] == "claude-nova-6"),
        "{}",
        metrics["models"]
    );
    let models = s.anon().get_ok("/api/models").await;
    assert_eq!(
        models["watch"]["report"]["missing"],
        json!(["claude-sonnet-5"])
    );
}

async fn a_job_on_a_deprecated_model_is_warned_and_counted_on_the_dashboard(s: Arc<TestStack>) {
    let user = "catalog-legacy";
    let (status, ack) = s
        .user(user)
        .post_json(
            "/jobs",
            &json!({"prompt": "Still on the old model", "model": "claude-opus-4-5", "max_tokens": 200}),
        )
        .await;
    assert_eq!(status, 202, "{ack}");
    let warning = ack["warnings"][0]
        .as_str()
        .unwrap_or_else(|| panic!("{ack}"));
    assert!(
        warning.contains("deprecated since 2026-11-23") && warning.contains("2027-01-22"),
        "{warning}"
    );
    let id = ack["jobId"].as_str().unwrap();
    let j = s.user(user).all_end(1).await.remove(0);
    assert_eq!(
        j["status"], "completed",
        "a deprecated model still answers: {j}"
    );
    let view = s.user(user).job(id).await;
    assert_eq!(view["warnings"][0], warning, "{view}");
    let (status, fb) = s
        .user(user)
        .post_json(
            "/feedback",
            &json!({"text": "Old model feedback", "model": "claude-opus-4-5"}),
        )
        .await;
    assert_eq!(status, 202, "{fb}");
    assert!(fb["warnings"][0].as_str().is_some(), "{fb}");
    let metrics = s.user(WATCHER).get_ok("/api/metrics").await;
    let row = metrics["models"]["deprecated"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["model"] == "claude-opus-4-5-20251101")
        .cloned()
        .unwrap_or_else(|| panic!("{}", metrics["models"]));
    assert_eq!(row["retires_on"], "2027-01-22", "{row}");
    assert!(row["jobs_this_week"].as_u64().unwrap() >= 1, "{row}");
}

async fn every_kind_of_work_completes_on_every_current_model(s: Arc<TestStack>) {
    // Every model's work is sent first, then every model's is checked: the models' Message
    // Batches and retries run side by side.
    let mut failed_once = Vec::new();
    for model in MODELS {
        let user = format!("work-{model}");
        let user = user.as_str();
        // Feedback, both modes.
        for mode in ["sync", "batch"] {
            let (status, ack) = s.user(user).post_json("/feedback", &json!({"text": format!("The export to CSV crashes every time on {model} ({mode})."),
                       "mode": mode, "model": model}),
            )
            .await;
            assert_eq!(status, 202, "{model} feedback {mode}: {ack}");
        }
        // Prompt jobs on both lanes (sync on high, batch on bulk), default max_tokens.
        for priority in ["high", "bulk"] {
            s.user(user).submit_job(&json!({"prompt": format!("Summarise the release notes for {model}, {priority} lane."),
                        "priority": priority, "model": model}),
            )
            .await;
        }
        // PDFs, both modes.
        for mode in ["sync", "batch"] {
            let file = (
                format!("plan-{mode}.pdf"),
                pdfs::make(&format!("Plan for {model}"), 2),
            );
            let (status, ack) = s
                .user(user)
                .upload(&[file], &[("mode", mode), ("model", model)])
                .await;
            assert_eq!(status, 202, "{model} pdf {mode}: {ack}");
        }
        // A job that fails once (a 400 the simulator injects on its first call), replayed from
        // the dead-letter triage.
        let failing = s
            .user(user)
            .submit_job(
                &json!({"prompt": format!("Replay me on {model} [[sim:400x1]]"), "model": model}),
            )
            .await;
        let failed = eventually(
            "the injected 400 fails the job",
            Duration::from_secs(60),
            || async {
                let j = s.user(user).job(&failing).await;
                (j["status"] == "failed").then_some(j)
            },
        )
        .await;
        assert_eq!(failed["attempts"], 1, "{failed}");
        let (status, replay) = s
            .user(user)
            .post_json(&format!("/api/dlq/{failing}/replay"), &json!({}))
            .await;
        assert_eq!(status, 202, "{model} replay: {replay}");
        // POST /api/claude on both paths.
        for inside in [true, false] {
            let caller = rollout_user(&format!("claude-{model}"), inside);
            let (status, answer) = s
                .user(&caller)
                .post_json(
                    "/api/claude",
                    &json!({"prompt": format!("Say hello from {model}."), "model": model}),
                )
                .await;
            assert_eq!(status, 200, "{model} /api/claude: {answer}");
            assert_eq!(answer["path"], if inside { "queue" } else { "direct" });
            assert!(
                answer["text"].as_str().is_some_and(|t| !t.is_empty()),
                "{answer}"
            );
        }
        failed_once.push(failing);
    }
    for (model, failing) in MODELS.iter().zip(&failed_once) {
        let user = format!("work-{model}");
        // 2 feedback + 2 prompts + 2 PDFs + the failed one and its replay.
        let jobs = s.user(&user).all_end(8).await;
        for j in &jobs {
            let id = j["id"].as_str().unwrap();
            if id == failing.as_str() {
                assert_eq!(j["status"], "failed");
                continue;
            }
            assert_eq!(j["status"], "completed", "{model}: {j}");
            // The model that answered is the catalog id (an alias resolves to its snapshot).
            let answered = j["model"].as_str().unwrap();
            assert_eq!(
                pipeline::models::find(answered).map(|m| m.id),
                pipeline::models::find(model).map(|m| m.id),
                "{j}"
            );
            assert!(j["cost_micros"].as_u64().unwrap() > 0, "{j}");
            assert_eq!(s.billed(id), 1, "{j}");
            assert_eq!(
                Some(j["cost_micros"].as_u64().unwrap()),
                Some(s.sim_cost(id)),
                "both price tables agree on {id}"
            );
        }
    }
    let (refused, why) = s.shape_refusals();
    assert_eq!(refused, 0, "requests refused for their shape: {why:?}");
}

async fn a_refusal_fails_its_job_once_billed_once_never_retried(s: Arc<TestStack>) {
    let user = "refused";
    let id = s
        .user(user)
        .submit_job(&json!({"prompt": "Something the model declines [[sim:refuse]]"}))
        .await;
    let j = s.user(user).all_end(1).await.remove(0);
    assert_eq!(j["status"], "failed", "{j}");
    assert!(j["error"].as_str().unwrap().contains("refusal"), "{j}");
    // The answer's stop_details go into the error: the policy area and the explanation.
    assert!(
        j["error"].as_str().unwrap().contains("category \"cyber\""),
        "{j}"
    );
    let j = s.user(user).job(&id).await;
    assert_eq!(j["attempts"], 1, "never retried: {j}");
    assert_eq!(s.billed(&id), 1);
    assert_eq!(
        j["cost_micros"].as_u64(),
        Some(s.sim_cost(&id)),
        "what was paid is recorded"
    );
    assert!(j["output_tokens"].as_u64().unwrap() > 0);
    // What was paid for is kept and served: the answer as the API sent it.
    assert_eq!(j["result_url"], format!("/jobs/{id}/result"), "{j}");
    let (status, kept) = s.user(user).get(&format!("/jobs/{id}/result")).await;
    assert_eq!(status, 200, "{kept}");
    assert_eq!(kept["stop_reason"], "refusal", "{kept}");
    assert_eq!(kept["usage"]["output_tokens"], j["output_tokens"], "{kept}");
}

/// Release notes, 2026-06-02: a request that returns `stop_reason: "refusal"` without any output
/// is not billed. The simulator bills it nothing; the job fails once with nothing spent.
async fn a_refusal_before_any_output_costs_nothing_on_either_side(s: Arc<TestStack>) {
    let user = "declined";
    let id = s
        .user(user)
        .submit_job(&json!({"prompt": "Something a classifier declines [[sim:decline]]"}))
        .await;
    let j = s.user(user).all_end(1).await.remove(0);
    assert_eq!(j["status"], "failed", "{j}");
    assert!(j["error"].as_str().unwrap().contains("refusal"), "{j}");
    let j = s.user(user).job(&id).await;
    assert_eq!(j["attempts"], 1, "never retried: {j}");
    assert_eq!(j["output_tokens"], 0, "{j}");
    assert_eq!(s.sim_cost(&id), 0, "the simulator billed nothing");
    assert_eq!(j["cost_micros"], 0, "nothing recorded as spent: {j}");
}

/// The user's usage rows (`GET /api/usage`) by model: (jobs, refusals, cost).
async fn usage_by_model(s: &Arc<TestStack>, user: &str) -> Vec<(String, u64, u64, u64)> {
    let report = s.user(user).get_ok("/api/usage").await;
    let mut rows: Vec<_> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["model"].as_str().unwrap().to_owned(),
                r["jobs"].as_u64().unwrap(),
                r["refusals"].as_u64().unwrap_or(0),
                r["cost_micros"].as_u64().unwrap(),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// The usage rollups agree with a scan of the jobs (refused attempts included).
async fn rollups_agree(s: &Arc<TestStack>) {
    let check = s.user("models-ops").get_ok("/api/usage/rollups").await;
    assert_eq!(check["consistent"], true, "{check}");
}

async fn a_refused_job_is_retried_once_on_its_fallback_billed_per_attempt(s: Arc<TestStack>) {
    let user = "refused-then-answered";
    let id = s
        .user(user)
        .submit_job(&json!({
            "prompt": "Explain this exploit [[sim:refuse@claude-fable-5-2]]",
            "model": "claude-fable-5-2",
            "fallback_model": "claude-sonnet-5-5",
            "max_tokens": 400,
            "output_config": {"effort": "low"},
        }))
        .await;
    let j = s.user(user).all_end(1).await.remove(0);
    assert_eq!(j["status"], "completed", "{j}");
    let j = s.user(user).job(&id).await;
    assert_eq!(
        j["model"], "claude-sonnet-5-5",
        "answered by the fallback: {j}"
    );
    assert_eq!(j["attempts"], 2, "{j}");
    assert_eq!(j["fallback_model"], "claude-sonnet-5-5");
    let refusal = &j["refusal"];
    assert_eq!(refusal["model"], "claude-fable-5-2", "{j}");
    assert_eq!(refusal["stop_details"]["category"], "cyber", "{j}");
    assert_eq!(refusal["n"], 1);
    let refused_cost = refusal["cost_micros"].as_u64().unwrap();
    assert!(
        refused_cost > 0,
        "a refusal after some output is billed: {j}"
    );
    // Billed per attempt, to the micro-dollar on both sides.
    assert_eq!(s.billed(&id), 2);
    assert_eq!(j["cost_micros"].as_u64(), Some(s.sim_cost(&id)), "{j}");
    let log: Vec<_> = j["attempt_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["model"].as_str().unwrap(), a["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        log,
        [
            ("claude-fable-5-2", "refused"),
            ("claude-sonnet-5-5", "completed")
        ],
        "{j}"
    );
    // In usage, each attempt under the model that billed it.
    let rows = usage_by_model(&s, user).await;
    let total = j["cost_micros"].as_u64().unwrap();
    assert_eq!(
        rows,
        [
            ("claude-fable-5-2".to_owned(), 0, 1, refused_cost),
            ("claude-sonnet-5-5".to_owned(), 1, 0, total - refused_cost),
        ],
        "{rows:?}"
    );
    rollups_agree(&s).await;
    // The result is the fallback's answer; the refused one is kept apart.
    let (_, text) = s.user(user).get_text(&format!("/jobs/{id}/result")).await;
    assert!(!text.is_empty());
}

async fn a_batch_job_refused_falls_back_to_a_later_batch_on_the_operators_fallback(
    s: Arc<TestStack>,
) {
    let user = "refused-in-batch";
    let (model, fallback) = OPERATOR_FALLBACK;
    let (status, ack) = s
        .user(user)
        .post_json(
            "/feedback",
            &json!({"text": "The login page leaks tokens [[sim:decline@claude-mythos-5-2]]",
                    "mode": "batch", "model": model}),
        )
        .await;
    assert_eq!(status, 202, "{ack}");
    let id = ack["id"].as_str().unwrap().to_owned();
    let j = s.user(user).all_end(1).await.remove(0);
    assert_eq!(j["status"], "completed", "{j}");
    let j = s.user(user).job(&id).await;
    assert_eq!(j["model"], fallback, "{j}");
    assert_eq!(j["mode"], "batch", "{j}");
    assert_eq!(j["refusal"]["model"], model, "{j}");
    // Declined before any output: not billed, on either side.
    assert_eq!(j["refusal"]["output_tokens"], 0, "{j}");
    assert_eq!(j["refusal"]["cost_micros"], 0, "{j}");
    assert_eq!(j["cost_micros"].as_u64(), Some(s.sim_cost(&id)), "{j}");
    assert!(
        j["cost_micros"].as_u64().unwrap() > 0,
        "the fallback's answer is: {j}"
    );
    let rows = usage_by_model(&s, user).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((rows[0].1, rows[0].2), (0, 1), "{rows:?}");
    rollups_agree(&s).await;
}

async fn a_refusal_on_the_fallback_too_fails_the_job_with_both_attempts_billed(s: Arc<TestStack>) {
    let user = "refused-twice";
    let id = s
        .user(user)
        .submit_job(&json!({
            "prompt": "Refused everywhere [[sim:refuse]]",
            "model": "claude-haiku-5-5",
            "fallback_model": "claude-sonnet-5-5",
            "max_tokens": 300,
        }))
        .await;
    let j = s.user(user).all_end(1).await.remove(0);
    assert_eq!(j["status"], "failed", "{j}");
    let j = s.user(user).job(&id).await;
    assert_eq!(j["attempts"], 2, "retried once, not twice: {j}");
    let error = j["error"].as_str().unwrap();
    assert!(
        error.contains("refusal") && error.contains("cyber"),
        "{error}"
    );
    assert_eq!(s.billed(&id), 2);
    assert_eq!(j["cost_micros"].as_u64(), Some(s.sim_cost(&id)), "{j}");
    rollups_agree(&s).await;
}

async fn a_fallback_model_must_be_another_current_model(s: Arc<TestStack>) {
    let client = s.user("fallback-checks");
    for (body, code) in [
        (
            json!({"prompt": "x", "fallback_model": "claude-nope-9"}),
            "unknown_model",
        ),
        (json!({"prompt": "x", "fallback_model": 5}), "invalid_field"),
        (
            json!({"prompt": "x", "model": "claude-opus-5-5", "fallback_model": "claude-opus-5-5"}),
            "invalid_field",
        ),
    ] {
        let (status, err) = client.post_json("/jobs", &body).await;
        assert_error(status, &err, 400, code);
        assert_eq!(err["field"], "fallback_model", "{err}");
    }
    let (status, err) = client
        .post_json(
            "/feedback",
            &json!({"text": "x", "fallback_model": "claude-nope-9"}),
        )
        .await;
    assert_error(status, &err, 400, "unknown_model");
    let listed = client.get_ok("/jobs").await;
    assert_eq!(listed["items"], json!([]), "nothing stored: {listed}");
}

async fn fast_mode_is_priced_at_its_rates_and_counted_apart(s: Arc<TestStack>) {
    let user = "fast-lane";
    let prompt = "Summarise the incident timeline in three lines.";
    let job = |speed: &str| {
        json!({"prompt": prompt, "model": "claude-opus-5-5", "speed": speed,
               "max_tokens": 600, "output_config": {"effort": "low"}})
    };
    let fast = s.user(user).submit_job(&job("fast")).await;
    let standard = s.user(user).submit_job(&job("standard")).await;
    s.user(user).all_end(2).await;
    let (f, st) = (
        s.user(user).job(&fast).await,
        s.user(user).job(&standard).await,
    );
    assert_eq!(
        (&f["status"], &st["status"]),
        (&json!("completed"), &json!("completed"))
    );
    assert_eq!(f["speed"], "fast", "{f}");
    assert!(st.get("speed").is_none(), "{st}");
    // The same answer, at twice every rate; billed alike on both sides.
    assert_eq!(f["output_tokens"], st["output_tokens"]);
    let (fc, sc) = (
        f["cost_micros"].as_u64().unwrap(),
        st["cost_micros"].as_u64().unwrap(),
    );
    assert!(fc.abs_diff(2 * sc) <= 1, "fast {fc} vs standard {sc}");
    assert_eq!(fc, s.sim_cost(&fast));
    assert_eq!(sc, s.sim_cost(&standard));
    // Counted apart in usage and the spenders' view.
    let usage = s.user(user).get_ok("/api/usage").await;
    assert_eq!(usage["totals"]["fast_jobs"], 1, "{usage}");
    assert_eq!(usage["totals"]["fast_cost_micros"], fc, "{usage}");
    assert_eq!(usage["totals"]["jobs"], 2, "{usage}");
    let spenders = s.user("models-ops").get_ok("/api/usage/spenders").await;
    let me = spenders["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["user_id"] == user)
        .unwrap_or_else(|| panic!("{spenders}"));
    assert_eq!(me["fast_jobs"], 1, "{me}");
    rollups_agree(&s).await;
    // POST /api/claude takes it too.
    let caller = rollout_user("fast-claude", false);
    let (status, answer) = s.user(&caller).post_json("/api/claude", &job("fast")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["cost_micros"].as_u64(), Some(fc), "{answer}");
}

async fn fast_mode_is_refused_where_it_is_not_offered_and_reserved_at_its_price(s: Arc<TestStack>) {
    let user = "fast-capped";
    let client = s.user(user);
    for body in [
        json!({"prompt": "x", "model": "claude-sonnet-5-5", "speed": "fast"}),
        json!({"prompt": "x", "model": "claude-opus-5-5", "speed": "fast", "mode": "batch"}),
        json!({"prompt": "x", "speed": "ludicrous"}),
    ] {
        let (status, err) = client.post_json("/jobs", &body).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["field"], "speed", "{err}");
    }
    // A cap that holds the standard worst case ($0.02 of output) but not the fast one.
    let (status, body) = s
        .user("models-ops")
        .put_json(
            "/api/usage/budget",
            &json!({"user_id": user, "daily_cap_micros": 30_000}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let job = |speed: &str| {
        json!({"prompt": "Hello", "model": "claude-opus-5-5", "speed": speed,
               "max_tokens": 1000, "output_config": {"effort": "low"}})
    };
    let (status, err) = client.post_json("/jobs", &job("fast")).await;
    assert_error(status, &err, 429, "budget_exceeded");
    let (status, ack) = client.post_json("/jobs", &job("standard")).await;
    assert_eq!(status, 202, "{ack}");
}

async fn a_thinking_only_answer_fails_its_job_once_billed_once(s: Arc<TestStack>) {
    let user = "thinker";
    // Sonnet 5.5 thinks by default; 200 tokens are not enough for 900 of thinking.
    let id = s
        .user(user)
        .submit_job(
            &json!({"prompt": "Think hard about this [[sim:think=900]]", "max_tokens": 200}),
        )
        .await;
    s.user(user).all_end(1).await;
    let j = s.user(user).job(&id).await;
    assert_eq!(j["status"], "failed", "{j}");
    let error = j["error"].as_str().unwrap();
    assert!(
        error.contains("thinking") && error.contains("max_tokens"),
        "{error}"
    );
    assert!(
        error.contains("larger max_tokens"),
        "says what would fit: {error}"
    );
    assert_eq!(j["attempts"], 1, "{j}");
    assert_eq!(j["output_tokens"], 200, "thinking is billed as output: {j}");
    // A new user's two-sentence prompt with max_tokens 200 is warned at submission, with what
    // would fit; the default max_tokens is not.
    let (status, ack) = s
        .user("thinker-warned")
        .post_json(
            "/jobs",
            &json!({"prompt": "Name two colours. Keep it short.", "max_tokens": 200}),
        )
        .await;
    assert_eq!(status, 202, "{ack}");
    let warning = ack["warnings"][0]
        .as_str()
        .unwrap_or_else(|| panic!("{ack}"));
    assert!(
        warning.contains("at least 3072") && warning.contains("effort \"low\""),
        "{warning}"
    );
    let (_, plain) = s
        .user("thinker-warned")
        .post_json("/jobs", &json!({"prompt": "Name two colours."}))
        .await;
    assert!(plain.get("warnings").is_none(), "{plain}");
    assert_eq!(s.billed(&id), 1);
    assert_eq!(j["cost_micros"].as_u64(), Some(s.sim_cost(&id)));
}

async fn an_unknown_block_type_and_stop_reason_do_not_break_the_job(s: Arc<TestStack>) {
    let user = "future";
    let id = s.user(user).submit_job(&json!({"prompt": "Answer from the future [[sim:block=hologram]] [[sim:stop=quantum_pause]]"}),
    )
    .await;
    s.user(user).all_end(1).await;
    let j = s.user(user).job(&id).await;
    assert_eq!(j["status"], "completed", "{j}");
    assert_eq!(j["attempts"], 1);
    assert_eq!(s.billed(&id), 1);
    let (_, text) = s.user(user).get_text(&format!("/jobs/{id}/result")).await;
    assert!(
        text.contains("Answer from the future"),
        "the text block is the answer: {text}"
    );
    assert!(
        !text.contains("a block type this client has never seen"),
        "the unknown block is not the answer: {text}"
    );
}

async fn an_undecodable_paid_answer_fails_once_with_its_cost_recorded(s: Arc<TestStack>) {
    let user = "garbled";
    let id = s
        .user(user)
        .submit_job(&json!({"prompt": "A body no client can read [[sim:undecodable]]"}))
        .await;
    s.user(user).all_end(1).await;
    let j = s.user(user).job(&id).await;
    assert_eq!(j["status"], "failed", "{j}");
    assert!(
        j["error"]
            .as_str()
            .unwrap()
            .contains("could not be decoded"),
        "{j}"
    );
    assert_eq!(j["attempts"], 1, "not retried as a network error: {j}");
    assert_eq!(s.billed(&id), 1);
    assert_eq!(j["cost_micros"].as_u64(), Some(s.sim_cost(&id)), "{j}");
}

async fn a_retired_or_unknown_model_is_refused_at_submission_everywhere(s: Arc<TestStack>) {
    let user = "too-late";
    // Calls that would have sent a job's request (not the cron's polls of batches).
    let sent = |s: &TestStack| -> u64 {
        s.sim_calls_where(|k| {
            k.starts_with("messages ")
                || k.starts_with("count_tokens ")
                || k.starts_with("batches.create ")
        })
    };
    let calls_before = sent(&s);
    for model in [
        "claude-sonnet-4-5",
        "claude-sonnet-4-5-20250929",
        "claude-3-haiku-20240307",
        "gpt-4o",
    ] {
        for (path, body) in [
            ("/jobs", json!({"prompt": "x", "model": model})),
            ("/feedback", json!({"text": "x", "model": model})),
            ("/api/claude", json!({"prompt": "x", "model": model})),
        ] {
            let (status, e) = s.user(user).post_json(path, &body).await;
            assert_error(status, &e, 400, "unknown_model");
            assert_eq!(e["field"], "model");
            let message = e["error"].as_str().unwrap();
            assert!(
                message.contains("claude-sonnet-5-5"),
                "lists the valid ids: {message}"
            );
            if model.starts_with("claude-sonnet-4-5") {
                assert!(message.contains("retired on 2026-11-30"), "{message}");
            }
        }
        let (status, e) = s
            .user(user)
            .upload(&[("a.pdf".into(), pdfs::make("A", 1))], &[("model", model)])
            .await;
        assert_error(status, &e, 400, "unknown_model");
    }
    assert!(s.user(user).all_jobs().await.is_empty(), "nothing stored");
    let calls_after = sent(&s);
    assert_eq!(calls_before, calls_after, "nothing sent to the API");
}

async fn settings_a_model_refuses_are_400s_and_another_model_runs_them(s: Arc<TestStack>) {
    let user = "settings";
    let tools = json!([{"name": "lookup", "description": "Look a word up.",
        "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}}}]);
    let cases = [
        (
            json!({"thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 4096}),
            "thinking",
        ),
        (json!({"thinking": {"type": "disabled"}}), "thinking"),
        (
            json!({"tools": tools, "tool_choice": {"type": "any"}}),
            "tool_choice",
        ),
        (
            json!({"output_config": {"effort": "max"}, "model": "claude-sonnet-4-5-20250929"}),
            "model",
        ),
    ];
    for (extra, field) in cases {
        let mut body = json!({"prompt": "Use the settings.", "model": "claude-sonnet-5-5"});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (status, e) = s.user(user).post_json("/jobs", &body).await;
        assert_eq!(status, 400, "{e}");
        assert_eq!(e["field"], field, "{e}");
    }
    let prefill = json!({"model": "claude-sonnet-5-5", "messages": [
        {"role": "user", "content": "Answer in JSON."}, {"role": "assistant", "content": "{"}]});
    let (status, e) = s.user(user).post_json("/jobs", &prefill).await;
    assert_error(status, &e, 400, "unsupported_by_model");
    assert_eq!(e["field"], "messages");
    assert!(s.user(user).all_jobs().await.is_empty(), "nothing stored");
    // Sonnet 4.6 takes a thinking budget and a forced tool; Haiku 5.5 a forced tool; Sonnet 5.5
    // the documented parameters it accepts.
    for body in [
        json!({"prompt": "Budgeted.", "model": "claude-sonnet-4-6", "max_tokens": 4096,
               "thinking": {"type": "enabled", "budget_tokens": 1024}, "tools": tools, "tool_choice": {"type": "tool", "name": "lookup"}}),
        json!({"prompt": "Forced.", "model": "claude-haiku-5-5", "tools": tools, "tool_choice": {"type": "any"}}),
        json!({"model": "claude-sonnet-5-5", "system": "Be brief.", "stop_sequences": ["END"],
               "metadata": {"user_id": "u-123"}, "thinking": {"type": "adaptive", "display": "summarized"},
               "output_config": {"effort": "medium", "format": {"type": "json_schema", "schema": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"], "additionalProperties": false}}},
               "messages": [{"role": "user", "content": [{"type": "text", "text": "What is a queue?"}]}]}),
    ] {
        s.user(user).submit_job(&body).await;
    }
    for j in s.user(user).all_end(3).await {
        assert_eq!(j["status"], "completed", "{j}");
    }
    let (refused, why) = s.shape_refusals();
    assert_eq!(refused, 0, "{why:?}");
}

async fn the_catalog_is_served_with_prices_and_standing(s: Arc<TestStack>) {
    let (status, catalog) = s.anon().get("/api/models").await;
    assert_eq!(status, 200, "{catalog}");
    assert_eq!(catalog["default"], "claude-sonnet-5-5");
    let ids: Vec<&str> = catalog["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"claude-opus-5-5") && ids.contains(&"claude-haiku-4-5-20251001"));
    assert!(
        !ids.contains(&"claude-sonnet-4-5-20250929"),
        "retired models are not offered"
    );
    let s55 = catalog["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "claude-sonnet-5-5")
        .unwrap();
    assert_eq!(s55["price"]["cache_read"], 100_000, "{s55}");
    assert_eq!(s55["max_output"], 128_000);
    assert_eq!(s55["general_rules"], json!([]), "{s55}");
    // Fable 5.2's cache prices are on no page read: the general rule, and the catalog says so.
    let f52 = catalog["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "claude-fable-5-2")
        .unwrap();
    assert_eq!(f52["price"]["input"], 8_000_000, "{f52}");
    assert_eq!(f52["price"]["cache_read"], 800_000, "{f52}");
    assert_eq!(
        f52["general_rules"],
        json!(["cache_prices", "min_cacheable", "fast_prices"]),
        "{f52}"
    );
    assert_eq!(f52["fast"]["price_permille"], 2_000, "{f52}");
    // The configured models are checked: the health report says they are current.
    let (_, health) = s.anon().get("/api/health").await;
    let models = health["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "models")
        .cloned()
        .unwrap();
    assert_eq!(models["ok"], true, "{models}");
}

/// A caller's conversation the API version refuses (api/versioning): a document block in an
/// assistant message, a text block with citations in a user message — 400s naming `messages`,
/// on every model (Sonnet 4.6 included, which the older version let through), before
/// anything is stored.
async fn what_api_version_2026_10_21_refuses_is_a_400_that_stores_nothing(s: Arc<TestStack>) {
    let user = "version-2026";
    let doc = json!({"type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "The spec, version 2."}});
    let cited = json!({"type": "text", "text": "As the spec says.",
        "citations": [{"type": "char_location", "cited_text": "version 2", "document_index": 0,
            "start_char_index": 10, "end_char_index": 19}]});
    for model in ["claude-sonnet-5-5", "claude-sonnet-4-6"] {
        let cases = [
            (
                json!([{"role": "user", "content": "Read this."},
                    {"role": "assistant", "content": [doc.clone()]},
                    {"role": "user", "content": "Summarise it."}]),
                "a document block in an assistant message",
            ),
            (
                json!([{"role": "user", "content": [cited.clone()]}]),
                "a text block with citations in a user message",
            ),
        ];
        for (messages, why) in cases {
            let body = json!({"model": model, "messages": messages, "max_tokens": 200});
            let (status, e) = s.user(user).post_json("/jobs", &body).await;
            assert_eq!(status, 400, "{model}: {e}");
            assert_eq!(e["field"], "messages", "{e}");
            let message = e["error"].as_str().unwrap_or_default();
            assert!(
                message.contains(why) && message.contains("2026-10-21"),
                "{e}"
            );
        }
    }
    assert!(s.user(user).all_jobs().await.is_empty(), "nothing stored");
}

/// Every request the Worker sent this suite (Messages, count_tokens, Message Batches, Files)
/// carried `anthropic-version: 2026-10-21`.
async fn every_request_speaks_api_version_2026_10_21(s: Arc<TestStack>) {
    let versions = s.sim_versions();
    assert!(
        versions.get("2026-10-21").is_some_and(|n| *n > 0),
        "{versions:?}"
    );
    assert_eq!(versions.len(), 1, "only 2026-10-21: {versions:?}");
}

async fn no_request_was_refused_for_its_shape(s: Arc<TestStack>) {
    let (refused, why) = s.shape_refusals();
    assert_eq!(refused, 0, "{why:?}");
}
