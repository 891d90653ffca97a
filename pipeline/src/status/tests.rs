use super::*;

#[test]
fn every_status_round_trips_through_its_spelling_and_serde() {
    for s in Status::ALL {
        assert_eq!(Status::parse(s.as_str()), Some(s));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, format!("\"{}\"", s.as_str()));
    }
    assert_eq!(Status::parse("done"), None);
}

#[test]
fn every_vocabulary_parses_its_spellings_and_refuses_the_rest() {
    for k in Kind::ALL {
        assert_eq!(k.as_str().parse::<Kind>(), Ok(k));
    }
    for l in Lane::ALL {
        assert_eq!(l.as_str().parse::<Lane>(), Ok(l));
    }
    for m in Mode::ALL {
        assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
    }
    let e = "urgent".parse::<Lane>().unwrap_err();
    assert_eq!(e.to_string(), "unknown lane \"urgent\"");
    assert!("Queued".parse::<Status>().is_err());
}

#[test]
fn the_migration_check_constraint_lists_exactly_the_statuses() {
    let sql = include_str!("../../../migrations/0001_init.sql");
    let start = sql
        .find("CHECK (status IN (")
        .expect("status CHECK in 0001");
    let rest = &sql[start + "CHECK (status IN (".len()..];
    let list = &rest[..rest.find(')').unwrap()];
    let mut in_sql: Vec<&str> = list
        .split(',')
        .map(|s| s.trim().trim_matches('\''))
        .collect();
    let mut ours: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
    in_sql.sort();
    ours.sort();
    assert_eq!(in_sql, ours);
}

#[test]
fn terminal_statuses_are_the_five_of_the_contract_and_enqueue_failed() {
    let terminal: Vec<_> = Status::ALL
        .into_iter()
        .filter(|s| s.is_terminal())
        .collect();
    assert_eq!(terminal.len(), 6);
    assert!(!Status::Queued.is_terminal());
    assert!(!Status::Running.is_terminal());
    assert!(!Status::Submitted.is_terminal());
}

#[test]
fn a_completed_job_never_changes_again() {
    for next in Status::ALL {
        assert!(!Status::Completed.can_become(next), "completed → {next}");
    }
}

#[test]
fn a_dead_letter_never_changes_its_replay_is_a_new_job() {
    for next in Status::ALL {
        assert!(
            !Status::DeadLettered.can_become(next),
            "dead_lettered → {next}"
        );
    }
}

#[test]
fn the_transitions_make_exactly_the_moves_the_state_machine_allows() {
    let mut made = std::collections::HashSet::new();
    for t in Transition::ALL {
        for from in t.from() {
            assert!(from.can_become(t.to()), "{t:?}: {from} → {}", t.to());
            made.insert((*from, t.to()));
        }
    }
    for from in Status::ALL {
        for to in Status::ALL {
            assert_eq!(
                from.can_become(to),
                made.contains(&(from, to)),
                "{from} → {to}"
            );
        }
    }
}

#[test]
fn every_change_into_an_end_releases_the_budget_reservation_and_no_other_does() {
    for t in Transition::ALL {
        assert_eq!(
            t.set().contains("reserved_micros = 0"),
            t.to().is_terminal(),
            "{t:?}"
        );
    }
}

#[test]
fn only_a_users_cancel_waits_for_the_bill_of_a_submitted_request() {
    for t in Transition::ALL {
        assert_eq!(
            t.set().contains("awaiting_bill = (status = 'submitted')"),
            t == Transition::Cancel,
            "{t:?}"
        );
    }
}

#[test]
fn guards_are_sql_over_the_stored_spellings() {
    assert_eq!(Transition::Claim.guard(), "status = 'queued'");
    assert_eq!(Transition::Claim.set(), "status = 'running'");
    assert_eq!(Transition::Requeue.set(), "status = 'queued'");
    assert_eq!(
        Transition::Fail.guard(),
        "status IN ('queued','running','submitted')"
    );
    assert_eq!(
        Status::terminal_sql_list(),
        "'enqueue_failed','completed','failed','dead_lettered','expired','canceled'"
    );
}

#[test]
fn only_a_queued_job_can_fail_to_enqueue() {
    for from in Status::ALL {
        assert_eq!(
            from.can_become(Status::EnqueueFailed),
            from == Status::Queued,
            "{from}"
        );
    }
}

#[test]
fn sync_rides_the_high_lane_and_batch_the_bulk_lane() {
    assert_eq!(Mode::Sync.default_lane(), Lane::High);
    assert_eq!(Mode::Batch.default_lane(), Lane::Bulk);
}

#[test]
fn the_dead_letter_queue_ends_only_a_job_still_waiting() {
    // A running job has a call in flight, a submitted one sits in a Message Batch that bills it:
    // a message that ran out of queue retries must not end either.
    assert_eq!(Transition::DeadLetterQueued.from(), &[Status::Queued]);
    assert_eq!(Transition::DeadLetterQueued.to(), Status::DeadLettered);
    assert!(Transition::DeadLetter.from().contains(&Status::Running));
}
