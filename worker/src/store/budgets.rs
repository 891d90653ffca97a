//! Per-user budgets and limits: caps, soft threshold and share weight; what a user spent and
//! has committed (the `spend` rows that migration 0010's triggers keep); their load on the
//! producers.

use pipeline::clock::DAY_MS;
use pipeline::money::UsdMicros;
use pipeline::ops::budgets::{periods, BudgetSetting, DailyBudget};
use serde::Deserialize;
use wasm_bindgen::JsValue;

use super::sql;
use super::{micros, money, num, Store};

/// A user's `user_budgets` row.
#[derive(Deserialize)]
struct Caps {
    daily_cap_micros: Option<f64>,
    monthly_cap_micros: Option<f64>,
    soft_micros: Option<f64>,
    share_weight: Option<f64>,
}

impl Store {
    /// A user's caps and soft threshold, what they spent today (UTC), and what is committed
    /// today and this month (the `spend` rows migration 0010's triggers keep).
    pub async fn budget(&self, user: &str, now: i64) -> worker::Result<DailyBudget> {
        let caps = self.caps(user).await?;
        self.spend_under(user, now, caps).await
    }

    /// [`Store::budget`] for a user an admin gave a budget; `None` (after one indexed read)
    /// for everyone else — the producers' check on every request.
    pub async fn budget_if_set(&self, user: &str, now: i64) -> worker::Result<Option<DailyBudget>> {
        match self.caps(user).await? {
            None => Ok(None),
            caps => Ok(Some(self.spend_under(user, now, caps).await?)),
        }
    }

    async fn caps(&self, user: &str) -> worker::Result<Option<Caps>> {
        self.first(
            "SELECT daily_cap_micros, monthly_cap_micros, soft_micros, share_weight \
             FROM user_budgets WHERE user_id = ?1",
            &[user.into()],
        )
        .await
    }

    /// What `user` spent today and has committed today and this month, under `caps`.
    async fn spend_under(
        &self,
        user: &str,
        now: i64,
        caps: Option<Caps>,
    ) -> worker::Result<DailyBudget> {
        #[derive(Deserialize)]
        struct Spent {
            spent: f64,
        }
        #[derive(Deserialize)]
        struct Committed {
            period: String,
            committed_micros: f64,
        }
        let spent: Option<Spent> = self
            .first(sql::SPENT, &[user.into(), num(now.div_euclid(DAY_MS))])
            .await?;
        let (day, month) = periods(now);
        let committed: Vec<Committed> = self
            .all(
                "SELECT period, committed_micros FROM spend WHERE user_id = ?1 \
                 AND period IN (?2, ?3)",
                &[user.into(), day.as_str().into(), month.as_str().into()],
            )
            .await?;
        let of = |p: &str| {
            committed
                .iter()
                .find(|c| c.period == p)
                .map(|c| micros(c.committed_micros))
                .unwrap_or_default()
        };
        Ok(DailyBudget {
            daily_cap_micros: caps.as_ref().and_then(|c| c.daily_cap_micros).map(micros),
            monthly_cap_micros: caps.as_ref().and_then(|c| c.monthly_cap_micros).map(micros),
            soft_micros: caps.as_ref().and_then(|c| c.soft_micros).map(micros),
            spent_today_micros: spent.map(|s| micros(s.spent)).unwrap_or_default(),
            committed_today_micros: of(&day),
            committed_month_micros: of(&month),
            share_weight: caps.as_ref().and_then(|c| c.share_weight).map(|w| w as u32),
        })
    }

    /// How many of `user`'s jobs are waiting (`queued`), and how many were made since `since`:
    /// what the per-user limits count.
    pub async fn user_load(&self, user: &str, since: i64) -> worker::Result<(u64, u64)> {
        #[derive(Deserialize)]
        struct N {
            n: f64,
        }
        let queued: Option<N> = self.first(sql::USER_QUEUED, &[user.into()]).await?;
        let recent: Option<N> = self
            .first(
                "SELECT COUNT(*) AS n FROM jobs WHERE user_id = ?1 AND created_at > ?2",
                &[user.into(), num(since)],
            )
            .await?;
        let n = |v: Option<N>| v.map_or(0, |v| v.n as u64);
        Ok((n(queued), n(recent)))
    }

    /// Sets a user's caps and soft threshold; all `None` removes the budget.
    pub async fn set_budget(&self, s: &BudgetSetting, now: i64) -> worker::Result<()> {
        if s.is_empty() {
            self.run(
                "DELETE FROM user_budgets WHERE user_id = ?1",
                &[s.user_id.as_str().into()],
            )
            .await?;
            return Ok(());
        }
        let amount = |v: Option<UsdMicros>| v.map(money).unwrap_or(JsValue::NULL);
        self.run(
            "INSERT INTO user_budgets (user_id, daily_cap_micros, soft_micros, updated_at, \
             monthly_cap_micros, share_weight) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT(user_id) DO UPDATE SET \
             daily_cap_micros = excluded.daily_cap_micros, soft_micros = excluded.soft_micros, \
             monthly_cap_micros = excluded.monthly_cap_micros, \
             share_weight = excluded.share_weight, updated_at = excluded.updated_at",
            &[
                s.user_id.as_str().into(),
                amount(s.daily_cap_micros),
                amount(s.soft_micros),
                num(now),
                amount(s.monthly_cap_micros),
                s.share_weight.map_or(JsValue::NULL, |w| num(w as i64)),
            ],
        )
        .await?;
        Ok(())
    }
}

/// A tag's cap and today's commitment, as read.
#[derive(Deserialize)]
struct TagBudgetRow {
    tag: String,
    daily_cap_micros: f64,
    committed_micros: Option<f64>,
}

/// `tag_budgets` with today's `tag_spend` (0020's triggers keep it).
const TAG_BUDGETS: &str = "SELECT b.tag, b.daily_cap_micros, s.committed_micros \
     FROM tag_budgets b LEFT JOIN tag_spend s ON s.tag = b.tag AND s.day = ?1";

impl Store {
    /// Sets a tag's daily cap, or (`None`) removes it.
    pub async fn set_tag_budget(
        &self,
        tag: &str,
        cap: Option<UsdMicros>,
        now: i64,
    ) -> worker::Result<()> {
        match cap {
            Some(cap) => {
                self.run(
                    "INSERT INTO tag_budgets (tag, daily_cap_micros, updated_at) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (tag) DO UPDATE SET daily_cap_micros = excluded.daily_cap_micros, \
                     updated_at = excluded.updated_at",
                    &[tag.into(), money(cap), num(now)],
                )
                .await?
            }
            None => {
                self.run("DELETE FROM tag_budgets WHERE tag = ?1", &[tag.into()])
                    .await?
            }
        };
        Ok(())
    }

    /// Every tag's cap with what its jobs committed today, or only those of `tags`.
    pub async fn tag_budgets(
        &self,
        tags: Option<&[String]>,
        now: i64,
    ) -> worker::Result<Vec<pipeline::ops::budgets::TagBudgetView>> {
        let rows: Vec<TagBudgetRow> = self
            .all(
                &format!("{TAG_BUDGETS} ORDER BY b.tag"),
                &[num(now.div_euclid(DAY_MS))],
            )
            .await?;
        Ok(rows
            .into_iter()
            .filter(|r| tags.is_none_or(|t| t.contains(&r.tag)))
            .map(|r| {
                pipeline::ops::budgets::TagBudgetView::new(
                    r.tag,
                    micros(r.daily_cap_micros),
                    micros(r.committed_micros.unwrap_or(0.0)),
                )
            })
            .collect())
    }
}
