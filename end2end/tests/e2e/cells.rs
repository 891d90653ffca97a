//! Cells (`pipeline::cells`), the key step of the plan past one database: the Worker runs as
//! two cells in one `wrangler dev` — cell 0 also the router (`CELLS=2`), each cell with its own
//! D1 database, queues and R2 bucket, one budget object for both. Users submit through the
//! router only; each user's jobs, usage rollup and spend are found in the cell `cell_of` names
//! for them, and in no other, and what the router answers them is what that cell holds.

use std::sync::Arc;
use std::time::Duration;

use end2end::{tests, StackConfig, Suite, TestStack};
use pipeline::cells::cell_of;
use serde_json::json;

const CELLS: u32 = 2;
const WAIT: Duration = Duration::from_secs(120);

pub fn suite() -> Suite {
    end2end::suite_with(
        "cells",
        StackConfig {
            cells: CELLS,
            ..StackConfig::vars(&[])
        },
        tests![a_users_jobs_usage_and_spend_stay_in_the_cell_the_router_sends_them_to],
    )
}

/// `(user_id → n)` of a `SELECT user_id, … AS n` on one cell.
fn per_user(s: &Arc<TestStack>, cell: usize, sql: &str) -> Vec<(String, u64)> {
    s.d1_cell(cell, sql)
        .iter()
        .map(|r| {
            (
                r["user_id"].as_str().unwrap_or_default().to_string(),
                r["n"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

async fn a_users_jobs_usage_and_spend_stay_in_the_cell_the_router_sends_them_to(s: Arc<TestStack>) {
    let users: Vec<String> = (0..8).map(|i| format!("cell-user-{i}")).collect();
    let homes: Vec<usize> = users.iter().map(|u| cell_of(u, CELLS) as usize).collect();
    assert!(
        homes.contains(&0) && homes.contains(&1),
        "the users must live in both cells: {homes:?}"
    );
    let mut jobs = Vec::new();
    for u in &users {
        let client = s.user(u);
        for i in 0..2 {
            let id = client
                .submit_job(&json!({
                    "prompt": format!("Which cell keeps job {i} of {u}?"),
                    "priority": "high",
                    "max_tokens": 200,
                    "output_config": {"effort": "low"}
                }))
                .await;
            jobs.push((u.clone(), id));
        }
    }
    for (u, id) in &jobs {
        s.user(u).job_reaches(id, "completed", WAIT).await;
    }
    let where_users = format!(
        "WHERE user_id IN ({})",
        users
            .iter()
            .map(|u| format!("'{u}'"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let stored: Vec<Vec<(String, u64)>> = (0..CELLS as usize)
        .map(|c| {
            per_user(
                &s,
                c,
                &format!("SELECT user_id, COUNT(*) AS n FROM jobs {where_users} GROUP BY user_id"),
            )
        })
        .collect();
    let usage: Vec<Vec<(String, u64)>> = (0..CELLS as usize)
        .map(|c| {
            per_user(
                &s,
                c,
                &format!(
                    "SELECT user_id, SUM(jobs) AS n FROM usage_days {where_users} GROUP BY user_id"
                ),
            )
        })
        .collect();
    let spent: Vec<Vec<(String, u64)>> = (0..CELLS as usize)
        .map(|c| {
            per_user(
                &s,
                c,
                &format!(
                    "SELECT user_id, SUM(committed_micros) AS n FROM spend {where_users} GROUP BY user_id"
                ),
            )
        })
        .collect();
    let of = |rows: &[(String, u64)], u: &str| {
        rows.iter()
            .find(|(user, _)| user == u)
            .map(|(_, n)| *n)
            .unwrap_or(0)
    };
    for (u, &home) in users.iter().zip(&homes) {
        for cell in 0..CELLS as usize {
            let (jobs_here, usage_here, spent_here) = (
                of(&stored[cell], u),
                of(&usage[cell], u),
                of(&spent[cell], u),
            );
            if cell == home {
                assert_eq!(jobs_here, 2, "{u}'s jobs in its cell {cell}");
                assert_eq!(usage_here, 2, "{u}'s usage rollup in its cell {cell}");
                assert!(spent_here > 0, "{u}'s spend in its cell {cell}");
            } else {
                assert_eq!(
                    (jobs_here, usage_here, spent_here),
                    (0, 0, 0),
                    "{u} has rows in cell {cell}, not its own ({home})"
                );
            }
        }
        // What the router answers the user is its cell's: its jobs, and its usage's cost.
        let listed = s.user(u).all_jobs().await;
        assert_eq!(listed.len(), 2, "{u}: {listed:?}");
        let report = s.user(u).get_ok("/api/usage").await;
        let cost = report["totals"]["cost_micros"].as_u64().unwrap();
        let cell_cost = s.d1_cell(
            home,
            &format!("SELECT SUM(cost_micros) AS n FROM usage_days WHERE user_id = '{u}'"),
        )[0]["n"]
            .as_u64()
            .unwrap();
        assert_eq!(cost, cell_cost, "{u}: {report}");
        assert!(cost > 0, "{u}: {report}");
    }
    let per_cell: Vec<usize> = (0..CELLS as usize)
        .map(|c| homes.iter().filter(|&&h| h == c).count())
        .collect();
    println!("    8 users over {CELLS} cells: {per_cell:?}; each user's 2 jobs, usage and spend in its own cell only");
}
