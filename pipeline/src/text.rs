//! Newtypes over a `String` (ids, names) that read as the text they are: `&JobId` is a `&str`
//! wherever one is asked for, compares with text, prints as itself and gives its `String` back.
//! Each type keeps its own constructors — what it accepts is its own rule.

/// Implements `Deref<Target = str>`, `PartialEq` with `str`, `&str` and `String`, `Display`,
/// and `From<$t> for String` for a tuple struct `$t(String)`.
macro_rules! reads_as_text {
    ($t:ty) => {
        impl std::ops::Deref for $t {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $t {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $t {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $t {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<$t> for String {
            fn from(v: $t) -> String {
                v.0
            }
        }
    };
}
