// Control experiment: plain-JS Worker doing only the storage writes our pipeline does
// when it settles Message Batch results (per 100 lines: 100 R2 puts + one D1 batch).
// No Rust, no wasm.

const PAD = "x".repeat(1200); // makes each answer ~1.5 KB of JSON

function answer(id, k) {
  return JSON.stringify({
    id,
    type: "message",
    role: "assistant",
    model: "claude-control",
    content: [{ type: "text", text: `answer ${k} ${PAD}` }],
    stop_reason: "end_turn",
    usage: { input_tokens: 100 + (k % 50), output_tokens: 300 + (k % 70) },
  });
}

const jobId = (k) => `job-${String(k).padStart(8, "0")}`;

function json(obj, status = 200) {
  return new Response(JSON.stringify(obj), {
    status,
    headers: { "content-type": "application/json" },
  });
}

async function setup(env, n) {
  await env.DB.batch([
    env.DB.prepare("DROP TABLE IF EXISTS jobs"),
    env.DB.prepare("DROP TABLE IF EXISTS attempts"),
    env.DB.prepare(
      "CREATE TABLE jobs(id TEXT PRIMARY KEY, status TEXT, cost INTEGER, updated_at INTEGER)"
    ),
    env.DB.prepare("CREATE TABLE attempts(job_id TEXT, at INTEGER, body TEXT)"),
  ]);
  // 25 rows x 4 params = 100 bound params per statement (D1's limit); 40 statements per batch.
  const ROWS = 25, STMTS = 40;
  const now = Date.now();
  let stmts = [];
  for (let k = 0; k < n; k += ROWS) {
    const m = Math.min(ROWS, n - k);
    const sql =
      "INSERT INTO jobs(id, status, cost, updated_at) VALUES " +
      Array(m).fill("(?, ?, ?, ?)").join(", ");
    const args = [];
    for (let i = 0; i < m; i++) args.push(jobId(k + i), "submitted", 0, now);
    stmts.push(env.DB.prepare(sql).bind(...args));
    if (stmts.length === STMTS) {
      await env.DB.batch(stmts);
      stmts = [];
    }
  }
  if (stmts.length) await env.DB.batch(stmts);
  const row = await env.DB.prepare("SELECT count(*) AS c FROM jobs").first();
  return { ok: true, jobs: row.c };
}

async function chunk(env, from, size, onlyIf, doR2 = true, doD1 = true) {
  const ids = [];
  for (let k = from; k < from + size; k++) ids.push(jobId(k));

  // 1. R2: one ~1.5 KB JSON object per line, distinct key, create-if-absent.
  let bytes = 0, skipped = 0;
  const CONC = 10;
  for (let i = 0; doR2 && i < ids.length; i += CONC) {
    await Promise.all(
      ids.slice(i, i + CONC).map(async (id, j) => {
        const body = answer(id, from + i + j);
        bytes += body.length;
        const opts = { httpMetadata: { contentType: "application/json" } };
        if (onlyIf) opts.onlyIf = { etagDoesNotMatch: "*" };
        const r = await env.BUCKET.put(`results/${id}.json`, body, opts);
        if (r === null) skipped++;
      })
    );
  }

  // 2. D1: one batch — UPDATE of the 100 rows + 100 attempt rows (4 x 25-row INSERTs,
  //    75 bound params each, to stay under D1's 100-param limit).
  const now = Date.now();
  const stmts = [
    env.DB.prepare(
      `UPDATE jobs SET status = 'succeeded', cost = 1234, updated_at = ${now} WHERE id IN (` +
        ids.map(() => "?").join(", ") +
        ")"
    ).bind(...ids),
  ];
  for (let i = 0; i < ids.length; i += 25) {
    const part = ids.slice(i, i + 25);
    const args = [];
    for (const id of part) args.push(id, now, `{"result":"succeeded","key":"results/${id}.json"}`);
    stmts.push(
      env.DB.prepare(
        "INSERT INTO attempts(job_id, at, body) VALUES " + part.map(() => "(?, ?, ?)").join(", ")
      ).bind(...args)
    );
  }
  const res = doD1 ? await env.DB.batch(stmts) : [{ meta: { changes: 0 } }];
  return {
    ok: true,
    from,
    r2_puts: doR2 ? ids.length : 0,
    r2_bytes: bytes,
    r2_skipped: skipped,
    d1_statements: doD1 ? stmts.length : 0,
    rows_updated: res[0].meta.changes,
  };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (request.method === "GET" && url.pathname === "/health") return json({ ok: true });
      if (request.method === "POST" && url.pathname === "/setup") {
        const n = parseInt(url.searchParams.get("n") || "12000", 10);
        return json(await setup(env, n));
      }
      if (request.method === "POST" && url.pathname === "/chunk") {
        const from = parseInt(url.searchParams.get("from") || "0", 10);
        const size = parseInt(url.searchParams.get("size") || "100", 10);
        const onlyIf = url.searchParams.get("onlyif") !== "0";
        const doR2 = url.searchParams.get("r2") !== "0";
        const doD1 = url.searchParams.get("d1") !== "0";
        return json(await chunk(env, from, size, onlyIf, doR2, doD1));
      }
      return json({ ok: false, error: "not found" }, 404);
    } catch (e) {
      return json({ ok: false, error: String(e && e.stack ? e.stack : e) }, 500);
    }
  },
};
