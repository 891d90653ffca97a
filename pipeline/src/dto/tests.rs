use super::*;

#[test]
fn a_loopback_base_url_is_the_simulator() {
    assert_eq!(
        AnthropicTarget::describe("http://127.0.0.1:8788", false).kind,
        "simulator"
    );
    assert_eq!(
        AnthropicTarget::describe("http://localhost:9000/x", false).kind,
        "simulator"
    );
    assert_eq!(
        AnthropicTarget::describe("https://api.anthropic.com", true).kind,
        "anthropic"
    );
}

#[test]
fn queue_messages_are_tagged_by_type() {
    let json = serde_json::to_value(QueueMessage::Ping { sent_at: 5 }).unwrap();
    assert_eq!(json, serde_json::json!({"type": "ping", "sent_at": 5}));
    let job = serde_json::to_value(QueueMessage::Job { id: "x".into() }).unwrap();
    assert_eq!(job, serde_json::json!({"type": "job", "id": "x"}));
}

#[test]
fn the_job_ack_keeps_the_seed_shape() {
    assert_eq!(
        serde_json::to_value(JobAck::queued("j1")).unwrap(),
        serde_json::json!({"jobId": "j1", "status": "queued", "pollUrl": "/jobs/j1"})
    );
}

#[test]
fn the_feedback_ack_keeps_the_seed_shape() {
    let ack = FeedbackAck {
        ok: true,
        status: Status::Queued,
        id: "i".into(),
        mode: Mode::Batch,
        warnings: Vec::new(),
    };
    assert_eq!(
        serde_json::to_value(ack).unwrap(),
        serde_json::json!({"ok": true, "status": "queued", "id": "i", "mode": "batch"})
    );
}
