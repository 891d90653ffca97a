//! Job identifiers, elapsed time and list cursors: the small pure pieces every job API shares.

use crate::error::ApiError;
use crate::status::Status;

/// A UUID v4 made of 16 random bytes (the Worker supplies the randomness, so this stays pure).
pub fn new_id(random: [u8; 16]) -> String {
    uuid::Builder::from_random_bytes(random)
        .into_uuid()
        .hyphenated()
        .to_string()
}

/// Whether `s` has the shape of an id we issue — hyphenated, lowercase — so that a bad id is a
/// 404 without touching D1.
pub fn is_id(s: &str) -> bool {
    s.len() == 36 && !s.bytes().any(|b| b.is_ascii_uppercase()) && uuid::Uuid::try_parse(s).is_ok()
}

/// The id of a job or an upload, as we issue them: only [`JobId::parse`] and [`JobId::new`] make
/// one, so a value of this type is always well-formed (and a path segment that is not one is a
/// 404 before anything is looked up).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JobId(String);

impl JobId {
    /// A fresh id from 16 random bytes.
    pub fn new(random: [u8; 16]) -> JobId {
        JobId(new_id(random))
    }

    /// The id `s` names, if it has the shape of one we issue.
    pub fn parse(s: &str) -> Option<JobId> {
        is_id(s).then(|| JobId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

reads_as_text!(JobId);

/// A stored id is read through [`JobId::parse`]: a row whose id is not one we issue is a decode
/// error, never a job with a malformed id.
impl TryFrom<String> for JobId {
    type Error = String;
    fn try_from(s: String) -> Result<JobId, String> {
        if is_id(&s) {
            Ok(JobId(s))
        } else {
            Err(format!("{s:?} is not a job id"))
        }
    }
}

impl serde::Serialize for JobId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for JobId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<JobId, D::Error> {
        let s = String::deserialize(d)?;
        JobId::try_from(s).map_err(serde::de::Error::custom)
    }
}

/// `elapsed_ms`: ticking (now − created) while the job is in flight, frozen at the real total
/// (completed − created) once it is terminal.
pub fn elapsed_ms(status: Status, created_at: i64, completed_at: Option<i64>, now: i64) -> i64 {
    let end = match (status.is_terminal(), completed_at) {
        (true, Some(done)) => done,
        _ => now,
    };
    (end - created_at).max(0)
}

/// A position in a newest-first list: the `(created_at, id)` of the last item shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: i64,
    pub id: String,
}

impl Cursor {
    /// Opaque to clients: `<created_at>.<id>`.
    pub fn encode(&self) -> String {
        format!("{}.{}", self.created_at, self.id)
    }

    pub fn decode(s: &str) -> Result<Cursor, ApiError> {
        let bad = || {
            ApiError::bad_request(
                "invalid_cursor",
                "the cursor is not one we issued",
                Some("cursor"),
            )
        };
        let (at, id) = s.split_once('.').ok_or_else(bad)?;
        let created_at = at.parse::<i64>().map_err(|_| bad())?;
        if created_at < 0 || !is_id(id) {
            return Err(bad());
        }
        Ok(Cursor {
            created_at,
            id: id.to_owned(),
        })
    }
}

/// Page size of a list request: default 20, at most 100.
pub fn page_limit(raw: Option<&str>) -> Result<u32, ApiError> {
    match raw {
        None => Ok(20),
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=100).contains(n))
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_limit",
                    "limit must be a whole number from 1 to 100",
                    Some("limit"),
                )
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_are_uuid_v4_and_recognised() {
        let id = new_id([0xab; 16]);
        assert_eq!(id, "abababab-abab-4bab-abab-abababababab");
        assert!(is_id(&id));
        assert!(!is_id("abababab-abab-4bab-abab-ababababab"));
        assert!(!is_id("../../etc/passwd"));
        assert!(
            !is_id("abababababab-4bab-abab-abab-abababab"),
            "hyphens misplaced"
        );
        assert!(!is_id("ABABABAB-ABAB-4BAB-ABAB-ABABABABABAB"));
    }

    #[test]
    fn only_well_formed_ids_become_job_ids() {
        let id = JobId::new([7; 16]);
        assert_eq!(JobId::parse(id.as_str()), Some(id.clone()));
        assert_eq!(id.to_string().len(), 36);
        for bad in ["", "x", "../etc", "ABABABAB-ABAB-4BAB-ABAB-ABABABABABAB"] {
            assert_eq!(JobId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn elapsed_ticks_in_flight_and_freezes_when_terminal() {
        assert_eq!(elapsed_ms(Status::Running, 1000, None, 4000), 3000);
        assert_eq!(elapsed_ms(Status::Completed, 1000, Some(2500), 9000), 1500);
        assert_eq!(elapsed_ms(Status::Submitted, 1000, None, 1000), 0);
    }

    #[test]
    fn a_bad_cursor_is_a_400_naming_the_field() {
        for c in [
            "",
            "abc",
            "12.",
            "x.abababab-abab-4bab-abab-abababababab",
            "-5.abababab-abab-4bab-abab-abababababab",
        ] {
            let e = Cursor::decode(c).unwrap_err();
            assert_eq!(
                (e.status, e.body.field.as_deref()),
                (400, Some("cursor")),
                "{c}"
            );
        }
    }

    #[test]
    fn limits_default_to_20_and_stay_within_1_to_100() {
        assert_eq!(page_limit(None).unwrap(), 20);
        assert_eq!(page_limit(Some("100")).unwrap(), 100);
        for bad in ["0", "101", "x", "-1"] {
            assert!(page_limit(Some(bad)).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn cursors_round_trip(at in 0i64..i64::MAX, bytes in proptest::array::uniform16(any::<u8>())) {
            let c = Cursor { created_at: at, id: new_id(bytes) };
            prop_assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        }

        #[test]
        fn elapsed_is_never_negative(created in 0i64..1_000_000, done in 0i64..1_000_000, now in 0i64..1_000_000) {
            for s in Status::ALL {
                prop_assert!(elapsed_ms(s, created, Some(done), now) >= 0);
            }
        }
    }
}
