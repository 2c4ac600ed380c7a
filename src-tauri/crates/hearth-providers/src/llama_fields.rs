//! llama.cpp's server's sampling fields (those beyond OpenAI's), described once for both
//! directions: what Hearth sends to an OpenAI-compatible server that takes them, and what
//! Hearth's own server reads from a request (`hearth-server`). A field added here is sent and
//! read; a round-trip test keeps the two directions the same.

use serde_json::{Map, Value, json};

use hearth_core::{Mirostat, SamplerStage, SamplingParams};

/// One field: its wire name, the value sent for some settings, and how a request's value sets
/// them.
#[derive(Debug)]
pub struct LlamaField {
    pub name: &'static str,
    /// The value sent (`context_length`: what a window of -1, "the whole context", is sent as).
    write: fn(&SamplingParams, u32) -> Value,
    /// Sets the field from a request's value; what is wrong with the value otherwise.
    read: fn(&mut SamplingParams, &Value) -> Result<(), String>,
}

impl LlamaField {
    /// The field named `name`, if llama.cpp's server has it.
    pub fn named(name: &str) -> Option<&'static LlamaField> {
        LLAMA_FIELDS.iter().find(|field| field.name == name)
    }

    /// Sets the field in `sampling` from `value`; the reason the value is refused otherwise.
    pub fn read(&self, sampling: &mut SamplingParams, value: &Value) -> Result<(), String> {
        (self.read)(sampling, value)
    }
}

macro_rules! float {
    ($name:literal, $field:ident) => {
        LlamaField {
            name: $name,
            write: |s, _| json!(s.$field),
            read: |s, v| {
                s.$field = float(v)?;
                Ok(())
            },
        }
    };
}

/// Every llama.cpp sampling field Hearth sends and reads, in the order they are sent.
pub const LLAMA_FIELDS: &[LlamaField] = &[
    float!("dynatemp_range", dynatemp_range),
    float!("dynatemp_exponent", dynatemp_exponent),
    LlamaField {
        name: "top_k",
        write: |s, _| json!(s.top_k),
        read: |s, v| {
            s.top_k = whole(v)?;
            Ok(())
        },
    },
    float!("min_p", min_p),
    float!("typical_p", typical_p),
    float!("top_n_sigma", top_n_sigma),
    float!("xtc_probability", xtc_probability),
    float!("xtc_threshold", xtc_threshold),
    float!("dry_multiplier", dry_multiplier),
    float!("dry_base", dry_base),
    LlamaField {
        name: "dry_allowed_length",
        write: |s, _| json!(s.dry_allowed_length),
        read: |s, v| {
            s.dry_allowed_length = whole(v)?;
            Ok(())
        },
    },
    LlamaField {
        name: "dry_penalty_last_n",
        write: |s, n_ctx| window(s.dry_last_n, n_ctx),
        read: |s, v| {
            s.dry_last_n = signed(v)?;
            Ok(())
        },
    },
    LlamaField {
        name: "dry_sequence_breakers",
        write: |s, _| json!(s.dry_sequence_breakers),
        read: |s, v| {
            s.dry_sequence_breakers = strings(v)?;
            Ok(())
        },
    },
    LlamaField {
        name: "mirostat",
        write: |s, _| json!(mirostat_number(s.mirostat)),
        read: |s, v| {
            s.mirostat = mirostat(v)?;
            Ok(())
        },
    },
    float!("mirostat_tau", mirostat_tau),
    float!("mirostat_eta", mirostat_eta),
    float!("repeat_penalty", repeat_penalty),
    LlamaField {
        name: "repeat_last_n",
        write: |s, n_ctx| window(s.repeat_last_n, n_ctx),
        read: |s, v| {
            s.repeat_last_n = signed(v)?;
            Ok(())
        },
    },
    // llama.cpp's server closes the reasoning block after this many tokens (-1: its own
    // setting; 0: at once); `chat_template_kwargs.enable_thinking` goes beside it at 0.
    LlamaField {
        name: "reasoning_budget_tokens",
        write: |s, _| json!(s.reasoning_budget),
        read: |s, v| {
            s.reasoning_budget = signed(v)?;
            Ok(())
        },
    },
    LlamaField {
        name: "ignore_eos",
        write: |s, _| json!(s.ignore_eos),
        read: |s, v| {
            s.ignore_eos = boolean(v)?;
            Ok(())
        },
    },
    LlamaField {
        name: "samplers",
        write: |s, _| json!(s.sampler_order.iter().map(|stage| sampler_name(*stage)).collect::<Vec<_>>()),
        read: |s, v| {
            s.sampler_order = strings(v)?.iter().map(|name| sampler(name)).collect::<Result<_, _>>()?;
            Ok(())
        },
    },
];

/// Every field, as llama.cpp's server takes it, added to a request body.
pub fn write_all(body: &mut Map<String, Value>, sampling: &SamplingParams, context_length: u32) {
    for field in LLAMA_FIELDS {
        body.insert(field.name.into(), (field.write)(sampling, context_length));
    }
}

/// llama.cpp's server's name for a sampler stage (its `samplers` field).
pub fn sampler_name(stage: SamplerStage) -> &'static str {
    match stage {
        SamplerStage::Penalties => "penalties",
        SamplerStage::Dry => "dry",
        SamplerStage::TopNSigma => "top_n_sigma",
        SamplerStage::TopK => "top_k",
        SamplerStage::TypicalP => "typ_p",
        SamplerStage::TopP => "top_p",
        SamplerStage::MinP => "min_p",
        SamplerStage::Xtc => "xtc",
        SamplerStage::Temperature => "temperature",
    }
}

fn sampler(name: &str) -> Result<SamplerStage, String> {
    SamplerStage::DEFAULT_ORDER.into_iter().find(|&stage| sampler_name(stage) == name).ok_or_else(|| {
        let names: Vec<&str> = SamplerStage::DEFAULT_ORDER.into_iter().map(sampler_name).collect();
        format!("`{name}` is not a sampler: use {}", names.join(", "))
    })
}

/// A window of tokens: -1 (the whole context) is sent as the context's length.
fn window(n: i32, context_length: u32) -> Value {
    if n < 0 { json!(context_length) } else { json!(n) }
}

fn float(value: &Value) -> Result<f32, String> {
    value.as_f64().map(|v| v as f32).ok_or_else(|| format!("must be a number, got {value}"))
}

fn whole(value: &Value) -> Result<u32, String> {
    value.as_u64().and_then(|v| u32::try_from(v).ok()).ok_or_else(|| format!("must be a whole number from 0, got {value}"))
}

fn signed(value: &Value) -> Result<i32, String> {
    value.as_i64().and_then(|v| i32::try_from(v).ok()).ok_or_else(|| format!("must be a whole number, got {value}"))
}

fn boolean(value: &Value) -> Result<bool, String> {
    value.as_bool().ok_or_else(|| format!("must be true or false, got {value}"))
}

fn strings(value: &Value) -> Result<Vec<String>, String> {
    let items = value.as_array().ok_or_else(|| format!("must be a list of strings, got {value}"))?;
    items.iter().map(|item| item.as_str().map(str::to_owned).ok_or_else(|| format!("must hold strings only, got {item}"))).collect()
}

fn mirostat_number(mirostat: Mirostat) -> u8 {
    match mirostat {
        Mirostat::Off => 0,
        Mirostat::V1 => 1,
        Mirostat::V2 => 2,
    }
}

fn mirostat(value: &Value) -> Result<Mirostat, String> {
    match value.as_u64() {
        Some(0) => Ok(Mirostat::Off),
        Some(1) => Ok(Mirostat::V1),
        Some(2) => Ok(Mirostat::V2),
        _ => Err(format!("must be 0 (off), 1 or 2, got {value}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settings unlike the defaults in every field: sent, then read back, they are the same.
    #[test]
    fn every_field_read_back_is_what_was_sent() {
        let sent = SamplingParams {
            dynatemp_range: 0.3,
            dynatemp_exponent: 1.5,
            top_k: 17,
            min_p: 0.07,
            typical_p: 0.9,
            top_n_sigma: 1.25,
            xtc_probability: 0.4,
            xtc_threshold: 0.2,
            dry_multiplier: 0.8,
            dry_base: 1.6,
            dry_allowed_length: 3,
            dry_last_n: 256,
            dry_sequence_breakers: vec!["\n".into(), "*".into()],
            mirostat: Mirostat::V2,
            mirostat_tau: 4.5,
            mirostat_eta: 0.2,
            repeat_penalty: 1.15,
            repeat_last_n: 128,
            ignore_eos: true,
            sampler_order: vec![SamplerStage::TopK, SamplerStage::MinP, SamplerStage::Temperature],
            reasoning_budget: 256,
            ..SamplingParams::default()
        };
        let mut body = Map::new();
        write_all(&mut body, &sent, 4096);
        assert_eq!(body.len(), LLAMA_FIELDS.len());
        let mut read = SamplingParams::default();
        for (name, value) in &body {
            LlamaField::named(name).expect("a field of the table").read(&mut read, value).unwrap();
        }
        assert_eq!(read, sent);
        // The whole context (-1) goes out as its length, which reads back as that many tokens.
        let whole_context = SamplingParams { dry_last_n: -1, ..SamplingParams::default() };
        let mut body = Map::new();
        write_all(&mut body, &whole_context, 4096);
        assert_eq!(body["dry_penalty_last_n"], json!(4096));
    }

    #[test]
    fn a_value_of_the_wrong_kind_is_refused_in_words() {
        let cases = [
            ("top_k", json!("five"), "whole number"),
            ("top_k", json!(-1), "whole number"),
            ("min_p", json!(true), "number"),
            ("mirostat", json!(3), "0 (off), 1 or 2"),
            ("samplers", json!(["top_k", "magic"]), "`magic` is not a sampler"),
            ("dry_sequence_breakers", json!([1]), "strings only"),
            ("ignore_eos", json!("yes"), "true or false"),
        ];
        for (name, value, words) in cases {
            let error = LlamaField::named(name).unwrap().read(&mut SamplingParams::default(), &value).unwrap_err();
            assert!(error.contains(words), "{name} {value}: {error}");
        }
    }
}
