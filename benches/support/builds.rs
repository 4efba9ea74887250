//! The builds a bench measures: this checkout's release binary, and, when
//! `SAFETY_DONGLE_BASELINE` names another build of safety-dongle (the code
//! before a change, built by `benches/against-before.sh`), that one too.
//! A bench runs the builds in alternating rounds, so whatever else loads
//! the machine falls on both alike, and reports each one's figures and
//! their ratio: "no slower than before" is read from one run.

use std::{path::PathBuf, time::Duration};

/// The environment variable naming the baseline build's binary.
pub const BASELINE: &str = "SAFETY_DONGLE_BASELINE";

pub struct Build {
    pub label: &'static str,
    pub binary: PathBuf,
}

/// This build, then the baseline when one is named.
pub fn builds() -> Vec<Build> {
    let mut builds =
        vec![Build { label: "this build", binary: env!("CARGO_BIN_EXE_safety-dongle").into() }];
    if let Some(binary) = std::env::var_os(BASELINE) {
        let binary = PathBuf::from(binary);
        assert!(binary.is_file(), "{BASELINE} names no file: {}", binary.display());
        builds.push(Build { label: "baseline", binary });
    }
    builds
}

/// The time at the `percent` percentile of sorted `times`.
pub fn percentile(times: &[Duration], percent: usize) -> Duration {
    assert!(!times.is_empty(), "no time measured");
    times[(times.len() * percent / 100).min(times.len() - 1)]
}

pub fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

/// Prints each build's median, p90 and p99 of `what`, and this build's
/// median as a ratio of the baseline's. `times` are sorted, one per build.
pub fn report(what: &str, builds: &[Build], times: &[Vec<Duration>]) {
    for (build, times) in builds.iter().zip(times) {
        println!(
            "{what} [{}] ({} runs): median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms",
            build.label,
            times.len(),
            ms(percentile(times, 50)),
            ms(percentile(times, 90)),
            ms(percentile(times, 99)),
        );
    }
    if let [this, baseline] = times {
        println!(
            "{what}: this build's median is {:.3}x the baseline's (p99 {:.3}x)",
            ms(percentile(this, 50)) / ms(percentile(baseline, 50)),
            ms(percentile(this, 99)) / ms(percentile(baseline, 99)),
        );
    }
}
