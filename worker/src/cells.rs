//! The router of cells (`pipeline::cells`): with `CELLS` = N > 1, this Worker is cell 0 and
//! forwards each request that names a user of another cell to it over the service binding
//! `CELL_<n>`. Each cell is a whole pipeline (its own D1, queues, R2 bucket and cron); the
//! budget object is cell 0's for all (the API's rate limits are the account's).
//!
//! A request is routed by the identity it names without a look-up (open mode's `x-user-id`);
//! one with a bearer key is served by cell 0, which holds the key directory — so cells are a
//! simulation of the plan's key step, in open mode (README: "Past one database").

use pipeline::cells::{route, Route};
use pipeline::identity::AuthMode;
use worker::Env;

/// The cell another than this one that should serve a request with these headers, if any.
pub fn other_cell(env: &Env, headers: &axum::http::HeaderMap) -> Option<u32> {
    let var = |name: &str| env.var(name).ok().map(|v| v.to_string());
    let cells: u32 = var("CELLS")?.trim().parse().ok()?;
    if cells <= 1 {
        return None;
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    match route(
        AuthMode::from_var(var("AUTH_MODE").as_deref()),
        header("authorization"),
        header("x-user-id"),
        cells,
    ) {
        Route::Cell(0) | Route::Here => None,
        Route::Cell(n) => Some(n),
    }
}
