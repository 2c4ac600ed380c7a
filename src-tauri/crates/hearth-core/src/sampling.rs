use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How the next token is chosen. Validated once, at the boundary, with [`SamplingParams::validate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct SamplingParams {
    /// 0 picks the most likely token every time (greedy).
    pub temperature: f32,
    /// `None` draws a fresh seed per reply.
    pub seed: Option<u32>,
    /// Upper bound on generated tokens for one reply.
    pub max_tokens: u32,
}

impl Default for SamplingParams {
    fn default() -> Self {
        SamplingParams { temperature: 0.7, seed: None, max_tokens: 1024 }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field} must be {range}, got {value}")]
pub struct SamplingError {
    pub field: &'static str,
    pub range: &'static str,
    pub value: String,
}

impl SamplingParams {
    pub fn validate(&self) -> Result<(), SamplingError> {
        let bad = |field, range, value: &dyn std::fmt::Display| SamplingError {
            field,
            range,
            value: value.to_string(),
        };
        if !(0.0..=5.0).contains(&self.temperature) {
            return Err(bad("temperature", "between 0 and 5", &self.temperature));
        }
        if !(1..=1_000_000).contains(&self.max_tokens) {
            return Err(bad("maxTokens", "between 1 and 1000000", &self.max_tokens));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(params: SamplingParams, expected: Result<(), &str>) {
        let got = params.validate().map_err(|e| e.to_string());
        assert_eq!(got, expected.map_err(str::to_owned), "{params:?}");
    }

    #[test]
    fn validation_names_the_field_and_range() {
        let base = SamplingParams::default();
        check(base.clone(), Ok(()));
        check(SamplingParams { temperature: 0.0, ..base.clone() }, Ok(()));
        check(
            SamplingParams { temperature: -0.1, ..base.clone() },
            Err("temperature must be between 0 and 5, got -0.1"),
        );
        check(
            SamplingParams { temperature: f32::NAN, ..base.clone() },
            Err("temperature must be between 0 and 5, got NaN"),
        );
        check(
            SamplingParams { max_tokens: 0, ..base },
            Err("maxTokens must be between 1 and 1000000, got 0"),
        );
    }
}
