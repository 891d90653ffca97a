//! `GET /api/routes` (admins; issue 36): each configured route's breakers, its calls and errors
//! over the last hour and its jobs' cost in that hour (`pipeline::ops::route_health`).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use pipeline::ops::route_health::{report, WINDOW_MS};

use crate::config::now_ms;
use crate::error::AppError;
use crate::identity::Caller;
use crate::services::AppState;

#[worker::send]
pub async fn get(
    State(state): State<AppState>,
    Caller(caller): Caller,
) -> Result<Response, AppError> {
    caller.require_admin("see the routes")?;
    let breakers = match state.budget.state().await {
        Ok(view) => view.breakers,
        Err(e) => {
            // The figures still answer: the breakers show as closed, and the log says why.
            worker::console_error!("routes: the budget did not answer ({e})");
            Vec::new()
        }
    };
    let (calls, spend) = state.store.route_figures(now_ms() - WINDOW_MS).await?;
    let configured: Vec<_> = state
        .config
        .routes
        .list
        .iter()
        .map(|r| (r.provider(), r.regional()))
        .collect();
    Ok(Json(report(&configured, &breakers, &calls, &spend)).into_response())
}
