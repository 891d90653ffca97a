//! Every end-to-end suite, in one binary: `e2e NAME [FILTER]` runs suite NAME (its own stack,
//! its tests in order), `e2e` runs them all one after the other, `e2e --list` names them.
//! `cargo xtask test` runs it once per suite, a few at a time; `cargo xtask test --suite NAME`
//! runs one. One binary, so that the suites and what they share are compiled and linked once.

use std::process::ExitCode;

use end2end::harness::Named;

mod abuse;
mod access;
mod api;
mod browser;
mod budget;
mod cells;
mod chaos;
mod envelope;
mod feedback;
mod hostile;
mod incident;
mod jobs;
mod limits;
mod models;
mod openapi;
mod operate;
mod ops;
mod outage;
mod reconciliation;
mod retention;
mod routing;
mod stream;
mod uploads;
mod webhooks;

/// Every suite, by name (the name of its module, of its state directory and of its log).
const SUITES: &[Named] = &[
    ("abuse", abuse::suite),
    ("races", abuse::races),
    ("access", access::suite),
    ("api", api::suite),
    ("browser", browser::suite),
    ("budget", budget::suite),
    ("cells", cells::suite),
    ("chaos", chaos::suite),
    ("envelope", envelope::suite),
    ("feedback", feedback::suite),
    ("hostile", hostile::suite),
    ("incident", incident::suite),
    ("jobs", jobs::suite),
    ("limits", limits::suite),
    ("models", models::suite),
    ("catalog", models::catalog),
    ("openapi", openapi::suite),
    ("operate", operate::suite),
    ("outage", outage::suite),
    ("ops", ops::suite),
    ("reconciliation", reconciliation::suite),
    ("retention", retention::suite),
    ("routing", routing::suite),
    ("stream", stream::suite),
    ("uploads", uploads::suite),
    ("webhooks", webhooks::suite),
];

fn main() -> ExitCode {
    end2end::harness::main(SUITES)
}
