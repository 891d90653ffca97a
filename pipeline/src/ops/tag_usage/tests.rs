use super::*;
use crate::dto::SpendColumns;
use crate::money::UsdMicros;

fn group(tag: &str, model: &str, jobs: u64, cost: u64) -> SpenderGroup {
    SpenderGroup {
        user_id: tag.into(),
        model: Some(model.into()),
        jobs,
        columns: SpendColumns {
            input_tokens: jobs * 10,
            output_tokens: jobs * 5,
            cost_micros: UsdMicros::new(cost),
            ..SpendColumns::default()
        },
        ..SpenderGroup::default()
    }
}

#[test]
fn tags_are_ranked_by_cost_with_their_models() {
    let groups = [
        group("team=search", "claude-sonnet-5-5", 2, 300),
        group("team=ads", "claude-haiku-5-5", 5, 50),
        group("team=search", "claude-haiku-5-5", 1, 10),
    ];
    let day = crate::clock::DAY_MS;
    let r = TagsReport::build(&groups, None, 10 * day, 12 * day, 100);
    assert_eq!(r.user_id, None);
    assert_eq!(r.tags.len(), 2);
    assert_eq!(r.tags[0].tag, "team=search");
    assert_eq!(r.tags[0].rank, 1);
    assert_eq!(r.tags[0].totals.spend.cost_micros, UsdMicros::new(310));
    assert_eq!(r.tags[0].totals.jobs, 3);
    assert_eq!(r.tags[0].models[0].model, "claude-sonnet-5-5");
    assert_eq!(r.tags[1].tag, "team=ads");
    assert_eq!(r.others, 0);
    let limited = TagsReport::build(&groups, Some("ann".into()), 10 * day, 12 * day, 1);
    assert_eq!(limited.tags.len(), 1);
    assert_eq!(limited.others, 1);
    assert_eq!(limited.user_id.as_deref(), Some("ann"));
}

#[test]
fn the_csv_has_a_line_per_tag_and_model() {
    let groups = [
        group("team=search", "claude-sonnet-5-5", 2, 300),
        group("team=search", "claude-haiku-5-5", 1, 10),
    ];
    let r = TagsReport::build(&groups, None, 0, crate::clock::DAY_MS, 100);
    let csv = r.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("rank,tag,model,"));
    assert_eq!(
        lines[1],
        "1,team=search,claude-sonnet-5-5,2,20,10,0,0,0.000300,0"
    );
}
