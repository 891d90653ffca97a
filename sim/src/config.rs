//! Simulator configuration: flags of `anthropic-sim`, or a struct literal in tests.

/// Knobs of the simulator.
#[derive(Debug, Clone)]
pub struct Config {
    /// When set, `x-api-key` must equal it; otherwise any non-empty key is accepted.
    pub api_key: Option<String>,
    /// Requests per minute.
    pub rpm: u32,
    /// Input tokens per minute (cache reads excluded, as with the real API).
    pub itpm: u32,
    /// Output tokens per minute.
    pub otpm: u32,
}

impl Default for Config {
    /// Limits of a mid-tier organisation: generous enough that the demo never sees a 429.
    fn default() -> Self {
        Config {
            api_key: None,
            rpm: 4_000,
            itpm: 2_000_000,
            otpm: 400_000,
        }
    }
}

impl Config {
    /// Parses `--flag value` pairs (after the program name); returns the port too.
    pub fn from_args(args: &[String]) -> Result<(u16, Config), String> {
        let mut port = 8788u16;
        let mut c = Config::default();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            let num = |v: String| {
                v.parse::<u32>()
                    .map_err(|_| format!("{flag}: {v:?} is not a number"))
            };
            match flag.as_str() {
                "--port" => port = value()?.parse().map_err(|_| "--port: not a port")?,
                "--api-key" => c.api_key = Some(value()?),
                "--rpm" => c.rpm = num(value()?)?,
                "--itpm" => c.itpm = num(value()?)?,
                "--otpm" => c.otpm = num(value()?)?,
                "-h" | "--help" => return Err(USAGE.to_string()),
                other => return Err(format!("unknown flag {other}\n{USAGE}")),
            }
        }
        Ok((port, c))
    }
}

pub const USAGE: &str =
    "usage: anthropic-sim [--port 8788] [--api-key KEY] [--rpm N] [--itpm N] [--otpm N]";

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn flags_set_port_and_limits() {
        let (port, c) = Config::from_args(&args("--port 9000 --rpm 5 --api-key k")).unwrap();
        assert_eq!(port, 9000);
        assert_eq!(c.rpm, 5);
        assert_eq!(c.api_key.as_deref(), Some("k"));
    }

    #[test]
    fn an_unknown_flag_or_a_missing_value_is_an_error() {
        assert!(Config::from_args(&args("--bogus")).is_err());
        assert!(Config::from_args(&args("--rpm")).is_err());
        assert!(Config::from_args(&args("--rpm many")).is_err());
    }
}
