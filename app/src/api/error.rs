//! A failed call of the API, as the pages show it.

/// A failed call, ready to show: the Worker's own message when it sent one, and the field it
/// names (so a form can show it next to that field).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
    pub field: Option<String>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.status == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{} ({})", self.message, self.status)
        }
    }
}

/// So that pages can render a `Result<_, ApiError>` inside an `ErrorBoundary`.
impl std::error::Error for ApiError {}

impl ApiError {
    /// The message, when the error names `field` (a form shows it next to that field).
    pub fn on_field(&self, field: &str) -> Option<String> {
        (self.field.as_deref() == Some(field)).then(|| self.message.clone())
    }

    /// The whole error, when it names none of a form's `fields` (shown under the form).
    pub fn elsewhere(&self, fields: &[&str]) -> Option<String> {
        let placed = self.field.as_deref().is_some_and(|f| fields.contains(&f));
        (!placed).then(|| self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(field: Option<&str>) -> ApiError {
        ApiError {
            status: 400,
            message: "text must not be empty".into(),
            field: field.map(str::to_owned),
        }
    }

    #[test]
    fn an_error_shows_next_to_its_field_or_under_the_form() {
        let e = refused(Some("text"));
        assert_eq!(
            e.on_field("text").as_deref(),
            Some("text must not be empty")
        );
        assert_eq!(e.on_field("source"), None);
        assert_eq!(e.elsewhere(&["text", "source"]), None);
        assert_eq!(
            e.elsewhere(&["source"]).as_deref(),
            Some("text must not be empty (400)")
        );
        assert!(refused(None).elsewhere(&["text"]).is_some());
    }

    #[test]
    fn a_network_failure_reads_without_a_status() {
        let e = ApiError {
            status: 0,
            message: "network error: offline".into(),
            field: None,
        };
        assert_eq!(e.to_string(), "network error: offline");
    }
}
