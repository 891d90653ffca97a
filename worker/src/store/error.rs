//! How a write the database refused failed: decided once, where D1 answers, so that no caller
//! reads an error's text.

/// How a write the database refused failed, decided once, here, where D1 answers.
#[derive(Debug)]
pub enum StoreError {
    /// The `jobs_admission` trigger (migration 0010) refused an insert over one of the user's
    /// caps: its `RAISE(ABORT, 'budget_exceeded')` rolled the whole batch back.
    BudgetExceeded,
    /// The `jobs_tag_admission` trigger (migration 0020) refused a job whose reservation would
    /// take one of its tags past its daily cap (`'tag_cap_exceeded'`); the batch rolled back.
    TagCapExceeded,
    /// A `UNIQUE` constraint refused the write (the batch rolled back): another request wrote
    /// the same key first.
    Conflict,
    /// Anything else the platform answered.
    D1(worker::Error),
}

impl From<worker::Error> for StoreError {
    /// D1 reports a trigger's `RAISE(ABORT, …)` and a constraint's failure only in its error's
    /// text, so the text is read once, here, and nowhere else.
    fn from(e: worker::Error) -> StoreError {
        let text = e.to_string();
        if text.contains("tag_cap_exceeded") {
            StoreError::TagCapExceeded
        } else if text.contains("budget_exceeded") {
            StoreError::BudgetExceeded
        } else if text.contains("UNIQUE constraint failed") {
            StoreError::Conflict
        } else {
            StoreError::D1(e)
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::BudgetExceeded => f.write_str("refused by a budget cap (budget_exceeded)"),
            StoreError::TagCapExceeded => f.write_str("refused by a tag's cap (tag_cap_exceeded)"),
            StoreError::Conflict => f.write_str("refused by a uniqueness constraint"),
            StoreError::D1(e) => write!(f, "{e}"),
        }
    }
}

impl From<StoreError> for worker::Error {
    fn from(e: StoreError) -> worker::Error {
        match e {
            StoreError::D1(e) => e,
            other => worker::Error::RustError(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StoreError;

    fn of(text: &str) -> StoreError {
        StoreError::from(worker::Error::RustError(text.into()))
    }

    #[test]
    fn a_refusal_is_told_by_what_the_trigger_or_the_constraint_raised() {
        assert!(matches!(
            of("D1_ERROR: budget_exceeded: SQLITE_CONSTRAINT"),
            StoreError::BudgetExceeded
        ));
        assert!(matches!(
            of("D1_ERROR: tag_cap_exceeded: SQLITE_CONSTRAINT"),
            StoreError::TagCapExceeded
        ));
        assert!(matches!(
            of("D1_ERROR: UNIQUE constraint failed: idempotency.user_id: SQLITE_CONSTRAINT"),
            StoreError::Conflict
        ));
        let other = of("D1_ERROR: no such table: jobs");
        assert!(matches!(other, StoreError::D1(_)));
        // A platform error keeps its own text on the way back out.
        assert_eq!(
            worker::Error::from(other).to_string(),
            "D1_ERROR: no such table: jobs"
        );
    }
}
