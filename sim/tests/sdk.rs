//! The official Anthropic Python SDK, unmodified, against the simulator: messages.create,
//! count_tokens, batches create / retrieve / list / results / cancel / delete, and errors mapped
//! to the SDK's exception classes (`tests/sdk/official_sdk.py`).
//!
//! The SDK is installed by `cargo xtask test` (pinned in `tests/sdk/requirements.txt`) into
//! `target/sdk-py`; `SIM_SDK_PYTHONPATH` can point elsewhere.

use std::path::PathBuf;
use std::process::Command;

#[tokio::test]
async fn the_official_python_sdk_works_unmodified_against_the_simulator() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let pythonpath = std::env::var_os("SIM_SDK_PYTHONPATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../target/sdk-py"));
    assert!(
        pythonpath.join("anthropic").is_dir(),
        "the anthropic SDK is not installed in {pythonpath:?}: run `cargo xtask test`, or \
         `pip install --target {} -r sim/tests/sdk/requirements.txt`",
        pythonpath.display()
    );
    let (addr, _) = sim::spawn(sim::Config {
        // The key the script uses; another key must be refused.
        api_key: Some("sk-sim".into()),
        knobs: sim::Knobs {
            batch_ms: 300,
            ..sim::Knobs::default()
        },
        clouds: Default::default(),
    })
    .await
    .unwrap();
    let script = manifest.join("tests/sdk/official_sdk.py");
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(script)
            .env("PYTHONPATH", pythonpath)
            .env("ANTHROPIC_BASE_URL", format!("http://{addr}"))
            .env_remove("ANTHROPIC_API_KEY")
            .output()
            .expect("run python3")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the SDK script failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("official SDK: all checks passed"),
        "{stdout}"
    );
}
