//! `hearth-cli bench --compare FILE`: this run's figures against those recorded in FILE
//! (docs/benchmarks.json), each with the direction that is better and the noise it moves by on
//! these machines. Ratios only: absolute times drift ±20 % between runs of one build, a ratio
//! measured within one run does not. `--record FILE` writes a run's figures into the file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The recorded figures: what a run is compared with.
#[derive(Deserialize, Serialize)]
pub struct Baseline {
    #[serde(default)]
    pub about: String,
    /// When and at which commit the values were measured.
    #[serde(default)]
    pub recorded: Recorded,
    pub figures: BTreeMap<String, Figure>,
}

#[derive(Deserialize, Serialize, Default, Clone)]
pub struct Recorded {
    pub date: String,
    pub commit: String,
}

/// One figure: its accepted value, which way is better, and by how much (a share of the value)
/// it moves between runs of one build.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
pub struct Figure {
    pub value: Value,
    pub better: Better,
    #[serde(default)]
    pub noise: f64,
}

#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
    /// Must stay as recorded (a yes/no figure: replies identical …).
    Same,
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Within the noise of the recorded value.
    Held,
    /// Moved the better way by more than the noise.
    Better,
    /// Moved the worse way by more than the noise.
    Regressed,
    /// Not in this run (its section failed or was not run).
    NotMeasured,
}

#[derive(Serialize)]
pub struct CheckRow {
    pub figure: String,
    pub recorded: Value,
    pub measured: Option<Value>,
    /// Measured ÷ recorded, for numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
    pub noise: f64,
    pub verdict: Verdict,
}

#[derive(Serialize)]
pub struct CheckReport {
    pub recorded: Recorded,
    pub rows: Vec<CheckRow>,
    pub regressed: Vec<String>,
    pub not_measured: Vec<String>,
}

impl Baseline {
    pub fn read(file: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let baseline: Baseline = serde_json::from_str(&text).map_err(|e| format!("{} is not a bench baseline: {e}", file.display()))?;
        for (name, figure) in &baseline.figures {
            let fits = match figure.better {
                Better::Same => !figure.value.is_null(),
                Better::Higher | Better::Lower => figure.value.is_number(),
            };
            if !fits || !(0.0..1.0).contains(&figure.noise) {
                return Err(format!("{}: figure {name:?} needs a number (a value for `same`) and a noise in [0, 1)", file.display()));
            }
        }
        Ok(baseline)
    }

    /// Each recorded figure against `report` (the bench's JSON, its figures at the top level).
    pub fn compare(&self, report: &Value) -> CheckReport {
        let rows: Vec<CheckRow> = self
            .figures
            .iter()
            .map(|(name, figure)| {
                let measured = report.get(name).filter(|v| !v.is_null()).cloned();
                let verdict = judge(figure, measured.as_ref());
                let change = measured.as_ref().and_then(Value::as_f64).zip(figure.value.as_f64()).map(|(m, r)| m / r);
                CheckRow { figure: name.clone(), recorded: figure.value.clone(), measured, change, noise: figure.noise, verdict }
            })
            .collect();
        let named = |verdict: Verdict| rows.iter().filter(|r| r.verdict == verdict).map(|r| r.figure.clone()).collect();
        CheckReport {
            recorded: self.recorded.clone(),
            regressed: named(Verdict::Regressed),
            not_measured: named(Verdict::NotMeasured),
            rows,
        }
    }

    /// Writes `report`'s value of each figure the file names (a figure not measured keeps its
    /// value), with today's date and `commit`.
    pub fn record(file: &Path, report: &Value, commit: &str) -> Result<(), String> {
        let mut baseline = Baseline::read(file)?;
        for (name, figure) in baseline.figures.iter_mut() {
            if let Some(measured) = report.get(name).filter(|v| !v.is_null()) {
                figure.value = round(measured);
            }
        }
        baseline.recorded = Recorded { date: today(), commit: commit.to_owned() };
        let text = serde_json::to_string_pretty(&baseline).map_err(|e| e.to_string())? + "\n";
        std::fs::write(file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))
    }
}

/// Whether `measured` holds `figure`, moved past its noise, or is missing.
pub fn judge(figure: &Figure, measured: Option<&Value>) -> Verdict {
    let Some(measured) = measured else { return Verdict::NotMeasured };
    if figure.better == Better::Same {
        return if *measured == figure.value { Verdict::Held } else { Verdict::Regressed };
    }
    let (Some(recorded), Some(measured)) = (figure.value.as_f64(), measured.as_f64()) else { return Verdict::NotMeasured };
    if !measured.is_finite() {
        return Verdict::NotMeasured;
    }
    let (low, high) = (recorded * (1.0 - figure.noise), recorded * (1.0 + figure.noise));
    match figure.better {
        Better::Higher if measured < low => Verdict::Regressed,
        Better::Higher if measured > high => Verdict::Better,
        Better::Lower if measured > high => Verdict::Regressed,
        Better::Lower if measured < low => Verdict::Better,
        _ => Verdict::Held,
    }
}

/// Four significant digits are more than any of these figures holds.
fn round(value: &Value) -> Value {
    match value.as_f64() {
        Some(x) if x.is_finite() && x != 0.0 => {
            let scale = 10f64.powi(3 - x.abs().log10().floor() as i32);
            serde_json::json!((x * scale).round() / scale)
        }
        _ => value.clone(),
    }
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0) as i64;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar (H. Hinnant's
/// algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The comparison as a table on stderr (stdout may be the JSON report).
pub fn print(check: &CheckReport) {
    eprintln!("\nAgainst the figures recorded {} at {}:", check.recorded.date, check.recorded.commit);
    eprintln!("{:<34} {:>10} {:>10} {:>8} {:>6}  verdict", "figure", "recorded", "measured", "change", "noise");
    let show = |v: &Value| v.as_f64().map_or_else(|| v.to_string(), |x| format!("{x:.3}"));
    for row in &check.rows {
        eprintln!(
            "{:<34} {:>10} {:>10} {:>8} {:>5.0}%  {:?}",
            row.figure,
            show(&row.recorded),
            row.measured.as_ref().map_or_else(|| "-".to_owned(), show),
            row.change.map_or_else(|| "-".to_owned(), |c| format!("×{c:.2}")),
            row.noise * 100.0,
            row.verdict
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn figure(value: Value, better: Better, noise: f64) -> Figure {
        Figure { value, better, noise }
    }

    #[test]
    fn each_direction_flags_only_a_move_the_wrong_way_past_its_noise() {
        use Better::{Higher, Lower, Same};
        use Verdict::{Held, NotMeasured, Regressed};
        let cases = [
            // (recorded, better, noise, measured, verdict)
            (json!(1.0), Higher, 0.05, Some(json!(0.96)), Held),
            (json!(1.0), Higher, 0.05, Some(json!(0.94)), Regressed),
            (json!(1.0), Higher, 0.05, Some(json!(1.06)), Verdict::Better),
            (json!(1.2), Lower, 0.15, Some(json!(1.35)), Held),
            (json!(1.2), Lower, 0.15, Some(json!(1.39)), Regressed),
            (json!(1.2), Lower, 0.15, Some(json!(0.9)), Verdict::Better),
            // typing ÷ hot: 20 ms of 330 recorded, 178 of 916 measured (issue 41's run).
            (json!(0.062), Lower, 0.5, Some(json!(178.0 / 916.0)), Regressed),
            (json!(true), Same, 0.0, Some(json!(true)), Held),
            (json!(true), Same, 0.0, Some(json!(false)), Regressed),
            (json!(1.0), Higher, 0.05, None, NotMeasured),
            (json!(1.0), Lower, 0.05, Some(json!("not a number")), NotMeasured),
        ];
        for (recorded, better, noise, measured, expected) in cases {
            let f = figure(recorded.clone(), better, noise);
            assert_eq!(judge(&f, measured.as_ref()), expected, "{better:?} {recorded} ± {noise}, measured {measured:?}");
        }
    }

    #[test]
    fn a_failed_section_leaves_its_figures_not_measured_and_the_rest_compared() {
        let baseline = Baseline {
            about: String::new(),
            recorded: Recorded::default(),
            figures: BTreeMap::from([
                ("decode_ratio".to_owned(), figure(json!(1.0), Better::Higher, 0.05)),
                ("parallel4_vs_server".to_owned(), figure(json!(0.8), Better::Higher, 0.1)),
                ("switch_back_ttft_ratio".to_owned(), figure(json!(1.0), Better::Lower, 0.2)),
            ]),
        };
        // The parallel section failed: its figures are absent from the report.
        let report = json!({ "decode_ratio": 0.9, "switch_back_ttft_ratio": 1.1, "failed_sections": [{ "section": "parallel" }] });
        let check = baseline.compare(&report);
        assert_eq!(check.regressed, ["decode_ratio"]);
        assert_eq!(check.not_measured, ["parallel4_vs_server"]);
        let held = check.rows.iter().find(|r| r.figure == "switch_back_ttft_ratio").unwrap();
        assert_eq!((held.verdict, held.change.map(|c| (c * 100.0).round())), (Verdict::Held, Some(110.0)));
    }

    #[test]
    fn recording_keeps_direction_noise_and_unmeasured_values() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("baseline.json");
        let before = json!({
            "about": "test",
            "recorded": { "date": "2026-01-01", "commit": "old" },
            "figures": {
                "decode_ratio": { "value": 1.0, "better": "higher", "noise": 0.05 },
                "mbr8_time_ratio": { "value": 4.1, "better": "lower", "noise": 0.15 }
            }
        });
        std::fs::write(&file, before.to_string()).unwrap();
        Baseline::record(&file, &json!({ "decode_ratio": 1.018_264_9, "other": 3 }), "abc1234").unwrap();
        let after = Baseline::read(&file).unwrap();
        assert_eq!(after.figures["decode_ratio"], figure(json!(1.018), Better::Higher, 0.05));
        assert_eq!(after.figures["mbr8_time_ratio"], figure(json!(4.1), Better::Lower, 0.15));
        assert_eq!(after.recorded.commit, "abc1234");
        assert_eq!(after.figures.len(), 2, "only the figures the file names are recorded");
    }

    #[test]
    fn a_baseline_without_direction_or_with_a_noise_past_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.json");
        for bad in [
            json!({ "figures": { "decode_ratio": { "value": 1.0 } } }),
            json!({ "figures": { "decode_ratio": { "value": 1.0, "better": "higher", "noise": 1.5 } } }),
            json!({ "figures": { "decode_ratio": { "value": "fast", "better": "higher" } } }),
        ] {
            std::fs::write(&file, bad.to_string()).unwrap();
            assert!(Baseline::read(&file).is_err(), "{bad} was read");
        }
    }

    #[test]
    fn dates_follow_the_calendar() {
        for (days, date) in [(0, (1970, 1, 1)), (11_016, (2000, 2, 29)), (20_785, (2026, 11, 28))] {
            assert_eq!(civil_from_days(days), date);
        }
    }
}
