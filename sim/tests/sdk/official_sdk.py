"""The official Anthropic Python SDK, unmodified, against anthropic-sim.

Run by sim/tests/sdk.rs with ANTHROPIC_BASE_URL pointing at a fresh simulator whose batches end
after a fraction of a second. Any failed expectation raises, and the process exits non-zero.
"""

import os
import time

import anthropic

BASE = os.environ["ANTHROPIC_BASE_URL"]
MODEL = "claude-sonnet-5-5"
client = anthropic.Anthropic(base_url=BASE, api_key="sk-sim", max_retries=0, timeout=20)


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError(f"{name}: {detail}")
    print(f"ok - {name}")


# messages.create
msg = client.messages.create(
    model=MODEL,
    max_tokens=2000,
    messages=[{"role": "user", "content": "Say hello to the simulator."}],
)
check("messages.create returns a Message", isinstance(msg, anthropic.types.Message), type(msg))
# Sonnet 5.5 thinks by default: the answer is read by block type, as its migration guide does.
kinds = [b.type for b in msg.content]
check("adaptive thinking comes before the text", kinds == ["thinking", "text"], kinds)
text = next(b.text for b in msg.content if b.type == "text")
check("the message has an id and text", msg.id.startswith("msg_") and text, msg)
check("thinking is billed as output", msg.usage.output_tokens > 0, msg.usage)

# a setting Sonnet 5.5 refuses is a 400 from the SDK too
try:
    client.messages.create(model=MODEL, max_tokens=50, extra_body={"temperature": 0.2},
                           messages=[{"role": "user", "content": "hi"}])
    raise AssertionError("temperature was accepted")
except anthropic.BadRequestError as e:
    check("a non-default temperature is refused", "temperature" in e.body["error"]["message"], e.body)

# models.list and models.retrieve
models = client.models.list(limit=100)
ids = [m.id for m in models.data]
check("models.list names the current models", MODEL in ids and "claude-haiku-5-5" in ids, ids)
check("a retired model is not listed", "claude-sonnet-4-5-20250929" not in ids, ids)
check("models.retrieve resolves an alias", client.models.retrieve("claude-haiku-4-5").id == "claude-haiku-4-5-20251001")
check("usage is reported", msg.usage.input_tokens > 0 and msg.usage.output_tokens > 0, msg.usage)
check("stop_reason is end_turn", msg.stop_reason == "end_turn", msg.stop_reason)

# a raw response exposes the headers
raw = client.messages.with_raw_response.create(
    model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}]
)
check("request-id header", raw.headers.get("request-id", "").startswith("req_"))
check("rate-limit headers", "anthropic-ratelimit-requests-remaining" in raw.headers)

# count_tokens
counted = client.messages.count_tokens(
    model=MODEL, messages=[{"role": "user", "content": "Count these tokens, please."}]
)
check("count_tokens answers input_tokens", counted.input_tokens > 0, counted)

# errors map to the SDK's exception classes
for marker, cls in [
    ("[[sim:400]]", anthropic.BadRequestError),
    ("[[sim:403]]", anthropic.PermissionDeniedError),
    ("[[sim:429]]", anthropic.RateLimitError),
    ("[[sim:500]]", anthropic.InternalServerError),
    ("[[sim:529]]", anthropic.OverloadedError),
]:
    try:
        client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": marker}])
        raise AssertionError(f"{marker} did not raise")
    except cls as e:
        check(f"{marker} raises {cls.__name__}", e.body["error"]["type"] is not None)
try:
    client.messages.create(model="claude-unknown-9", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    raise AssertionError("unknown model did not raise")
except anthropic.NotFoundError:
    check("an unknown model raises NotFoundError", True)
try:
    anthropic.Anthropic(base_url=BASE, api_key="sk-wrong", max_retries=0).messages.create(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "x"}]
    )
    raise AssertionError("a wrong key did not raise")
except anthropic.AuthenticationError:
    check("a wrong key raises AuthenticationError", True)

# batches: create / retrieve / list / results
batch = client.messages.batches.create(
    requests=[
        {"custom_id": "first", "params": {"model": MODEL, "max_tokens": 2000,
                                          "messages": [{"role": "user", "content": "One"}]}},
        {"custom_id": "second", "params": {"model": MODEL, "max_tokens": 2000,
                                           "messages": [{"role": "user", "content": "Two [[sim:400]]"}]}},
    ]
)
check("batches.create returns an in-progress batch", batch.processing_status == "in_progress", batch)
for _ in range(100):
    batch = client.messages.batches.retrieve(batch.id)
    if batch.processing_status == "ended":
        break
    time.sleep(0.1)
check("batches.retrieve sees it end", batch.processing_status == "ended", batch)
check("request_counts add up", batch.request_counts.succeeded == 1 and batch.request_counts.errored == 1,
      batch.request_counts)
listed = [b.id for b in client.messages.batches.list(limit=10)]
check("batches.list includes it", batch.id in listed, listed)
results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
check("results has one entry per request", set(results) == {"first", "second"}, results)
check("the first succeeded", results["first"].type == "succeeded"
      and any(b.type == "text" and b.text for b in results["first"].message.content))
check("the second errored", results["second"].type == "errored"
      and results["second"].error.error.type == "invalid_request_error", results["second"])

# batches: cancel
slow = client.messages.batches.create(
    requests=[{"custom_id": "late", "params": {"model": MODEL, "max_tokens": 10,
                                               "messages": [{"role": "user", "content": "x"}]}}]
)
canceled = client.messages.batches.cancel(slow.id)
check("batches.cancel starts canceling", canceled.processing_status in ("canceling", "ended"), canceled)
for _ in range(100):
    canceled = client.messages.batches.retrieve(slow.id)
    if canceled.processing_status == "ended":
        break
    time.sleep(0.1)
check("a canceled batch ends with canceled results", canceled.request_counts.canceled == 1, canceled)
deleted = client.messages.batches.delete(slow.id)
check("batches.delete deletes an ended batch", deleted.id == slow.id and deleted.type == "message_batch_deleted")

print("official SDK: all checks passed")
