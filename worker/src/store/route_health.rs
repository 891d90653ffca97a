//! The routes' figures of the last hour (`GET /api/routes`, `pipeline::ops::route_health`).

use pipeline::ops::route_health::{RouteCalls, RouteSpendRow};

use super::sql::{ROUTE_CALLS, ROUTE_SPEND};
use super::{num, Store};

impl Store {
    /// Calls and errors, and jobs and their cost, per route since `since`: two statements in
    /// one round trip.
    pub async fn route_figures(
        &self,
        since: i64,
    ) -> worker::Result<(Vec<RouteCalls>, Vec<RouteSpendRow>)> {
        let results = self
            .batch(vec![
                self.statement(ROUTE_CALLS, &[num(since)])?,
                self.statement(ROUTE_SPEND, &[num(since)])?,
            ])
            .await?;
        let calls = results.first().map(|r| r.results()).transpose()?;
        let spend = results.get(1).map(|r| r.results()).transpose()?;
        Ok((calls.unwrap_or_default(), spend.unwrap_or_default()))
    }
}
