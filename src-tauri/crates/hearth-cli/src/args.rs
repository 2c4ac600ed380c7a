//! Command-line parsing. Sampling flags map onto `SamplingParams` fields by name, so every
//! setting the app has is a flag here without a second list to keep in step.

use std::net::IpAddr;
use std::path::PathBuf;

use serde_json::{Map, Value};

use hearth_core::{ProviderKind, SamplingParams};
use hearth_engine::{FlashAttention, KvType, LoadParams};

#[derive(Debug)]
pub struct ChatArgs {
    /// A GGUF file, or with `remote` the provider's model name.
    pub model: String,
    /// Chat with a remote provider instead of a local model.
    pub remote: Option<RemoteArgs>,
    pub load: LoadParams,
    /// Whether any load flag was given; with `db` and none, the model's saved load settings apply.
    pub load_given: bool,
    pub system: Option<String>,
    /// The sampling flags over the defaults.
    pub sampling: SamplingParams,
    /// The sampling flags alone: with `db` they adjust the chat's own settings, as the app resolves them.
    pub sampling_flags: SamplingFlags,
    /// Save the conversation as a chat in this Hearth history database.
    pub db: Option<PathBuf>,
    /// With `db`: carry on this chat instead of starting a new one.
    pub chat: Option<i64>,
    /// Each line starts a new conversation (the model stays loaded), as "New chat" does in the app.
    pub fresh: bool,
}

#[derive(Debug, PartialEq)]
pub struct RemoteArgs {
    pub kind: ProviderKind,
    /// `None`: the kind's usual URL.
    pub base_url: Option<String>,
}

#[derive(Debug)]
pub struct BenchArgs {
    pub model: PathBuf,
    pub threads: u32,
    pub turns: usize,
    pub json: bool,
    /// llama-server to compare TTFT with (default: scripts/build-llama-server.sh's build).
    pub server: Option<PathBuf>,
    pub no_server: bool,
    /// A draft model to measure speculative decoding with, beside prompt lookup.
    pub draft: Option<PathBuf>,
    /// The context (`bench-cut-back` only; default 8,192).
    pub n_ctx: Option<u32>,
    /// The sections to run (`--sections a,b`; default all), in the bench's order.
    pub sections: Vec<crate::bench_kit::Section>,
    /// Figures recorded earlier to compare this run's with (`--compare FILE`).
    pub compare: Option<PathBuf>,
    /// Record this run's figures in that file (`--record FILE`).
    pub record: Option<PathBuf>,
    /// How the engine's sections load the model (`--flash-attn`, `--kv-type`; default the app's).
    pub flash_attention: FlashAttention,
    pub kv_cache_type: KvType,
}

impl ChatArgs {
    pub fn parse(args: &[String]) -> Result<ChatArgs, String> {
        let mut model = None;
        let mut load = LoadParams::default();
        let mut system = None;
        let mut db = None;
        let mut chat = None;
        let mut fresh = false;
        let mut kind = None;
        let mut base_url = None;
        let mut sampling = SamplingFlags::new();
        let mut it = Flags::new(args);
        let mut load_given = false;
        while let Some(flag) = it.next_flag()? {
            load_given |= LOAD_FLAGS.contains(&flag.as_str());
            match flag.as_str() {
                "model" => model = Some(it.value(&flag)?),
                "provider" => {
                    let value = it.value(&flag)?;
                    kind = Some(
                        ProviderKind::parse(&value)
                            .ok_or_else(|| format!("--provider {value:?}: choose openai, anthropic or openai-compatible"))?,
                    );
                }
                "base-url" => base_url = Some(it.value(&flag)?),
                "ctx" => load.n_ctx = Some(number(&flag, &it.value(&flag)?)?),
                "threads" => load.n_threads = Some(number(&flag, &it.value(&flag)?)?),
                "batch" => load.n_batch = number(&flag, &it.value(&flag)?)?,
                "ubatch" => load.n_ubatch = number(&flag, &it.value(&flag)?)?,
                "gpu-layers" => load.n_gpu_layers = Some(number(&flag, &it.value(&flag)?)?),
                "flash-attn" => load.flash_attention = choice(&flag, &it.value(&flag)?, FLASH_CHOICES)?,
                "kv-type" => load.kv_cache_type = choice(&flag, &it.value(&flag)?, KV_CHOICES)?,
                "no-mmap" => load.use_mmap = false,
                "mlock" => load.use_mlock = true,
                "mmproj" => load.projector = Some(it.value(&flag)?),
                "image-min-tokens" => load.image_min_tokens = Some(number(&flag, &it.value(&flag)?)?),
                "image-max-tokens" => load.image_max_tokens = Some(number(&flag, &it.value(&flag)?)?),
                "chat-template" => {
                    let path = it.value(&flag)?;
                    let template = std::fs::read_to_string(&path).map_err(|e| format!("--chat-template: cannot read {path}: {e}"))?;
                    load.chat_template = Some(template);
                }
                "system" => system = Some(it.value(&flag)?),
                "db" => db = Some(PathBuf::from(it.value(&flag)?)),
                "chat" => chat = Some(number(&flag, &it.value(&flag)?)?),
                "ignore-eos" => sampling.set("ignore-eos", "true")?,
                "lookup" => sampling.set("speculative", "promptLookup")?,
                "draft" => {
                    sampling.set("speculative", "draftModel")?;
                    sampling.set("draft-model", &it.value(&flag)?)?;
                }
                "beam" => {
                    sampling.set("strategy", "beam")?;
                    sampling.set("beam-width", &it.value(&flag)?)?;
                }
                "mbr" => {
                    sampling.set("strategy", "consensus")?;
                    sampling.set("mbr-candidates", &it.value(&flag)?)?;
                }
                "fresh" => fresh = true,
                "preset" => sampling.preset(&it.value(&flag)?)?,
                _ => {
                    let value = it.value(&flag)?;
                    sampling.set(&flag, &value)?;
                }
            }
        }
        let model = model.ok_or("--model is required: a GGUF file, or with --provider the provider's model name")?;
        if chat.is_some() && db.is_none() {
            return Err("--chat ID needs --db FILE: it names a chat saved there".into());
        }
        let remote = match (kind, base_url) {
            (Some(kind), base_url) => Some(RemoteArgs { kind, base_url }),
            (None, Some(_)) => return Err("--base-url needs --provider openai|anthropic|openai-compatible".into()),
            (None, None) => None,
        };
        if fresh && db.is_some() {
            return Err("--fresh starts a new conversation per line; it does not save them (--db)".into());
        }
        let flags = sampling.clone();
        Ok(ChatArgs { model, remote, load, load_given, system, sampling: sampling.finish()?, sampling_flags: flags, db, chat, fresh })
    }
}

/// `hearth-cli serve`: a model, its load and sampling flags (as `chat` takes them), and where to listen.
#[derive(Debug)]
pub struct ServeArgs {
    pub model: String,
    pub load: LoadParams,
    /// What requests' own sampling fields change.
    pub sampling: SamplingParams,
    pub host: IpAddr,
    pub port: u16,
    pub api_key: Option<String>,
    /// Requests may name any GGUF file of this folder: it is loaded when asked for.
    pub models_dir: Option<PathBuf>,
    /// Web origins whose pages may call the server (`--allow-origin`, repeatable).
    pub allowed_origins: Vec<String>,
    /// Requests in flight (`--queue`) and how long a request may take to arrive (`--read-timeout`).
    pub limits: hearth_server::Limits,
}

impl ServeArgs {
    pub fn parse(args: &[String]) -> Result<ServeArgs, String> {
        let mut host = IpAddr::from([127, 0, 0, 1]);
        let mut port = hearth_server::DEFAULT_PORT;
        let mut api_key = std::env::var("HEARTH_SERVER_KEY").ok();
        let mut models_dir = None;
        let mut allowed_origins = Vec::new();
        let mut limits = hearth_server::Limits::default();
        let mut rest = Vec::new();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let mut value = || it.next().cloned().ok_or(format!("{arg} needs a value"));
            match arg.as_str() {
                "--host" => host = value()?.parse().map_err(|_| "--host expects an IP address, e.g. 127.0.0.1 or 0.0.0.0".to_owned())?,
                "--port" => port = number("port", &value()?)?,
                "--api-key" => api_key = Some(value()?),
                "--models-dir" => models_dir = Some(PathBuf::from(value()?)),
                "--allow-origin" => allowed_origins.push(hearth_server::normalize_origin(&value()?)?),
                "--queue" => limits.queued_requests = number::<usize>("queue", &value()?)?.max(1),
                "--read-timeout" => {
                    let seconds: f32 = value()?.parse().map_err(|_| "--read-timeout expects seconds, e.g. 30".to_owned())?;
                    limits.read_timeout = std::time::Duration::try_from_secs_f32(seconds)
                        .ok()
                        .filter(|t| !t.is_zero())
                        .ok_or("--read-timeout expects a positive number of seconds")?;
                }
                _ => rest.push(arg.clone()),
            }
        }
        let chat = ChatArgs::parse(&rest)?;
        if chat.remote.is_some() || chat.db.is_some() || chat.system.is_some() || chat.fresh {
            return Err(
                "serve takes --model PATH with load and sampling flags; --provider, --db, --chat, --system and --fresh are chat's".into()
            );
        }
        Ok(ServeArgs {
            model: chat.model,
            load: chat.load,
            sampling: chat.sampling,
            host,
            port,
            api_key,
            models_dir,
            allowed_origins,
            limits,
        })
    }
}

impl BenchArgs {
    pub fn parse(args: &[String]) -> Result<BenchArgs, String> {
        let mut bench = BenchArgs {
            model: PathBuf::new(),
            threads: 0,
            turns: 20,
            json: false,
            server: None,
            no_server: false,
            draft: None,
            n_ctx: None,
            sections: crate::bench_kit::Section::ALL.to_vec(),
            compare: None,
            record: None,
            flash_attention: LoadParams::default().flash_attention,
            kv_cache_type: LoadParams::default().kv_cache_type,
        };
        let mut it = Flags::new(args);
        while let Some(flag) = it.next_flag()? {
            match flag.as_str() {
                "model" => bench.model = PathBuf::from(it.value(&flag)?),
                "threads" => bench.threads = number(&flag, &it.value(&flag)?)?,
                "turns" => bench.turns = number(&flag, &it.value(&flag)?)?,
                "json" => bench.json = true,
                "server" => bench.server = Some(PathBuf::from(it.value(&flag)?)),
                "no-server" => bench.no_server = true,
                "draft" => bench.draft = Some(PathBuf::from(it.value(&flag)?)),
                "n-ctx" => bench.n_ctx = Some(number(&flag, &it.value(&flag)?)?),
                "sections" => bench.sections = crate::bench_kit::Section::parse_list(&it.value(&flag)?)?,
                "compare" => bench.compare = Some(PathBuf::from(it.value(&flag)?)),
                "record" => bench.record = Some(PathBuf::from(it.value(&flag)?)),
                "flash-attn" => bench.flash_attention = choice(&flag, &it.value(&flag)?, FLASH_CHOICES)?,
                "kv-type" => bench.kv_cache_type = choice(&flag, &it.value(&flag)?, KV_CHOICES)?,
                other => return Err(format!("unknown flag --{other} for bench")),
            }
        }
        if bench.model.as_os_str().is_empty() {
            return Err("--model PATH is required".into());
        }
        if bench.threads == 0 {
            bench.threads = hearth_engine::physical_cores();
        }
        Ok(bench)
    }
}

const FLASH_CHOICES: &[(&str, FlashAttention)] =
    &[("auto", FlashAttention::Auto), ("on", FlashAttention::On), ("off", FlashAttention::Off)];
const KV_CHOICES: &[(&str, KvType)] = &[("f16", KvType::F16), ("q8_0", KvType::Q8_0), ("q4_0", KvType::Q4_0)];

/// The value named `value` among `choices`, or an error listing them.
fn choice<T: Copy>(flag: &str, value: &str, choices: &[(&str, T)]) -> Result<T, String> {
    choices.iter().find(|(name, _)| *name == value).map(|&(_, v)| v).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        format!("--{flag} expects one of {}, got {value:?}", names.join(", "))
    })
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value.parse().map_err(|_| format!("--{flag} expects a number, got {value:?}"))
}

/// `--name value` pairs.
struct Flags<'a> {
    args: std::slice::Iter<'a, String>,
}

impl<'a> Flags<'a> {
    fn new(args: &'a [String]) -> Self {
        Flags { args: args.iter() }
    }

    fn next_flag(&mut self) -> Result<Option<String>, String> {
        match self.args.next() {
            None => Ok(None),
            Some(a) => a.strip_prefix("--").map(|f| Some(f.to_owned())).ok_or(format!("unexpected argument {a:?}")),
        }
    }

    fn value(&mut self, flag: &str) -> Result<String, String> {
        self.args.next().cloned().ok_or(format!("--{flag} needs a value"))
    }
}

/// The flags that set how a model is loaded.
const LOAD_FLAGS: &[&str] = &[
    "ctx",
    "threads",
    "batch",
    "ubatch",
    "gpu-layers",
    "flash-attn",
    "kv-type",
    "no-mmap",
    "mlock",
    "chat-template",
    "mmproj",
    "image-min-tokens",
    "image-max-tokens",
];

/// Builds `SamplingParams` from flags by editing its JSON form, then validates it. Remembers
/// which fields the flags set, to lay them over other settings.
#[derive(Debug, Clone)]
pub struct SamplingFlags {
    fields: Map<String, Value>,
    given: Map<String, Value>,
}

impl SamplingFlags {
    fn new() -> Self {
        Self::from(&SamplingParams::default())
    }

    fn from(params: &SamplingParams) -> Self {
        let Value::Object(fields) = serde_json::to_value(params).expect("serializes") else { unreachable!("SamplingParams is a struct") };
        SamplingFlags { fields, given: Map::new() }
    }

    /// Starts from a built-in preset; flags after it adjust it.
    fn preset(&mut self, name: &str) -> Result<(), String> {
        let presets = SamplingParams::presets();
        let preset = presets.iter().find(|p| p.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
            let names: Vec<&str> = presets.iter().map(|p| p.name.as_str()).collect();
            format!("--preset expects one of {}, got {name:?}", names.join(", "))
        })?;
        *self = SamplingFlags::from(&preset.params);
        self.given = self.fields.clone();
        Ok(())
    }

    fn set(&mut self, flag: &str, raw: &str) -> Result<(), String> {
        let (key, value) = match flag {
            "temp" => ("temperature".to_owned(), scalar(raw)),
            "grammar" => ("constraint".to_owned(), serde_json::json!({ "kind": "gbnf", "source": raw })),
            "json-schema" => ("constraint".to_owned(), serde_json::json!({ "kind": "jsonSchema", "source": raw })),
            "logit-bias" => ("logitBias".to_owned(), logit_bias(raw)?),
            "sampler-order" => ("samplerOrder".to_owned(), raw.split(',').map(|s| Value::from(s.trim())).collect()),
            _ => (camel_case(flag), scalar(raw)),
        };
        let result = match self.fields.get_mut(&key) {
            None => return Err(format!("unknown flag --{flag} (see --help)")),
            Some(Value::Array(items)) if key != "samplerOrder" => {
                if key != "logitBias" && items_are_defaults(&key) && !self.given.contains_key(&key) {
                    items.clear();
                }
                items.push(if key == "logitBias" { value } else { Value::from(unescape(raw)) });
                Value::Array(items.clone())
            }
            Some(slot) => {
                *slot = value;
                slot.clone()
            }
        };
        self.given.insert(key, result);
        Ok(())
    }

    /// Whether a flag set the field `key` (its JSON name).
    pub fn gives(&self, key: &str) -> bool {
        self.given.contains_key(key)
    }

    /// `base` with the fields these flags set replaced, validated.
    pub fn over(&self, base: &SamplingParams) -> Result<SamplingParams, String> {
        let mut layered = SamplingFlags::from(base);
        layered.fields.extend(self.given.clone());
        layered.finish()
    }

    fn finish(self) -> Result<SamplingParams, String> {
        let params: SamplingParams =
            serde_json::from_value(Value::Object(self.fields)).map_err(|e| format!("invalid sampling flag: {e}"))?;
        params.validate().map_err(|e| e.to_string())?;
        Ok(params)
    }
}

/// A list flag given on the command line replaces the default list rather than extending it.
fn items_are_defaults(key: &str) -> bool {
    key == "drySequenceBreakers"
}

/// Numbers, booleans and `null` as JSON; anything else as a string ("v2", "off").
fn scalar(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::from(raw))
}

/// `TOKEN_ID=BIAS` or `TEXT=BIAS`.
fn logit_bias(raw: &str) -> Result<Value, String> {
    let (target, bias) = raw.rsplit_once('=').ok_or(format!("--logit-bias expects TOKEN=BIAS, got {raw:?}"))?;
    let bias: f32 = bias.parse().map_err(|_| format!("--logit-bias: {bias:?} is not a number"))?;
    let target = match target.parse::<u32>() {
        Ok(id) => serde_json::json!({ "kind": "token", "id": id }),
        Err(_) => serde_json::json!({ "kind": "text", "text": unescape(target) }),
    };
    Ok(serde_json::json!({ "target": target, "bias": bias }))
}

/// `\n` and `\t` typed in a shell become the characters.
fn unescape(raw: &str) -> String {
    raw.replace("\\n", "\n").replace("\\t", "\t")
}

fn camel_case(kebab: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in kebab.chars() {
        if c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use hearth_core::{BiasTarget, Constraint, LogitBias, MbrUtility, Mirostat, Speculative, Strategy};

    use super::*;

    fn parse(args: &[&str]) -> Result<SamplingParams, String> {
        let mut argv = vec!["--model".to_owned(), "m.gguf".to_owned()];
        argv.extend(args.iter().map(|s| s.to_string()));
        ChatArgs::parse(&argv).map(|a| a.sampling)
    }

    #[test]
    fn serve_takes_chats_model_flags_and_where_to_listen() {
        let argv = |args: &[&str]| args.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let served = ServeArgs::parse(&argv(&["--model", "m.gguf", "--port", "0", "--temp", "0.1", "--ctx", "512"])).unwrap();
        assert_eq!(
            (served.host.to_string(), served.port, served.sampling.temperature, served.load.n_ctx),
            ("127.0.0.1".into(), 0, 0.1, Some(512))
        );
        let open = ServeArgs::parse(&argv(&["--model", "m.gguf", "--host", "0.0.0.0", "--api-key", "k"])).unwrap();
        assert_eq!(open.models_dir, None);
        let library = ServeArgs::parse(&argv(&["--model", "m.gguf", "--models-dir", "models"])).unwrap();
        assert_eq!(library.models_dir, Some(PathBuf::from("models")));
        assert_eq!((open.host.to_string(), open.api_key.as_deref(), open.port), ("0.0.0.0".into(), Some("k"), hearth_server::DEFAULT_PORT));
        for bad in
            [&["--model", "m.gguf", "--host", "localhost"][..], &["--model", "m.gguf", "--db", "h.db"], &["--model", "m.gguf", "--port"]]
        {
            assert!(ServeArgs::parse(&argv(bad)).is_err(), "{bad:?}");
        }
    }

    /// With `--db` the flags adjust the chat's settings: only the fields they name change.
    #[test]
    fn flags_lay_over_other_settings_field_by_field() {
        let base = SamplingParams { temperature: 0.3, top_k: 5, seed: Some(9), ..SamplingParams::default() };
        let cases: &[(&[&str], SamplingParams)] = &[
            (&[], base.clone()),
            (&["--top-k", "7"], SamplingParams { top_k: 7, ..base.clone() }),
            (&["--stop", "A", "--stop", "B"], SamplingParams { stop: vec!["A".into(), "B".into()], ..base.clone() }),
            (&["--preset", "precise"], SamplingParams::presets()[0].params.clone()),
            (&["--preset", "precise", "--seed", "3"], SamplingParams { seed: Some(3), ..SamplingParams::presets()[0].params.clone() }),
        ];
        for (args, want) in cases {
            let mut argv = vec!["--model".to_owned(), "m.gguf".to_owned()];
            argv.extend(args.iter().map(|s| s.to_string()));
            let flags = ChatArgs::parse(&argv).unwrap().sampling_flags;
            assert_eq!(&flags.over(&base).unwrap(), want, "{args:?}");
        }
    }

    #[test]
    fn flags_map_onto_sampling_fields() {
        let p = parse(&[
            "--temp",
            "0.2",
            "--top-k",
            "7",
            "--mirostat",
            "v2",
            "--seed",
            "42",
            "--stop",
            "\\n\\n",
            "--stop",
            "User:",
            "--logit-bias",
            "15=-100",
            "--logit-bias",
            "Paris=-5",
            "--grammar",
            "root ::= \"a\"",
            "--dry-sequence-breakers",
            "x",
            "--ignore-eos",
        ])
        .unwrap();
        assert_eq!((p.temperature, p.top_k, p.mirostat, p.seed), (0.2, 7, Mirostat::V2, Some(42)));
        assert_eq!(p.stop, ["\n\n", "User:"]);
        assert_eq!(
            p.logit_bias,
            [
                LogitBias { target: BiasTarget::Token { id: 15 }, bias: -100.0 },
                LogitBias { target: BiasTarget::Text { text: "Paris".into() }, bias: -5.0 },
            ]
        );
        assert_eq!(p.constraint, Some(Constraint::Gbnf("root ::= \"a\"".into())));
        assert_eq!(p.dry_sequence_breakers, ["x"]);
        assert!(p.ignore_eos);

        let creative = parse(&["--preset", "creative", "--seed", "1"]).unwrap();
        assert_eq!((creative.temperature, creative.seed), (1.1, Some(1)));

        // The decoding lab's shorthands.
        let lookup = parse(&["--lookup", "--draft-max", "12"]).unwrap();
        assert_eq!((lookup.speculative, lookup.draft_max), (Speculative::PromptLookup, 12));
        let draft = parse(&["--draft", "small.gguf", "--draft-max", "4"]).unwrap();
        assert_eq!((draft.speculative, draft.draft_model.as_deref(), draft.draft_max), (Speculative::DraftModel, Some("small.gguf"), 4));
        assert!(parse(&["--speculative", "draftModel"]).unwrap_err().contains("draftModel must be a model file to draft with"));
        let mbr = parse(&["--temp", "0.7", "--mbr", "6", "--mbr-utility", "exactMatch"]).unwrap();
        assert_eq!((mbr.strategy, mbr.mbr_candidates, mbr.mbr_utility), (Strategy::Consensus, 6, MbrUtility::ExactMatch));
        let beam = parse(&["--beam", "3", "--n-best", "2", "--length-penalty", "0.5"]).unwrap();
        assert_eq!((beam.strategy, beam.beam_width, beam.n_best, beam.length_penalty), (Strategy::Beam, 3, 2, 0.5));
        assert!(parse(&["--beam", "9"]).unwrap_err().contains("beamWidth must be between 1 and 8"));
        assert!(parse(&["--temp", "0", "--mbr", "4"]).unwrap_err().contains("temperature must be above 0 for consensus"));
    }

    #[test]
    fn bad_flags_say_what_is_wrong() {
        let cases: &[(&[&str], &str)] = &[
            (&["--top-p", "2"], "topP must be between 0 and 1, got 2"),
            (&["--tmp", "1"], "unknown flag --tmp"),
            (&["--top-k", "many"], "invalid sampling flag"),
            (&["--mirostat", "v3"], "invalid sampling flag"),
            (&["--seed"], "--seed needs a value"),
            (&["stray"], "unexpected argument"),
            (&["--preset", "wild"], "--preset expects one of Precise, Balanced, Creative"),
            (&["--provider", "gemini"], "choose openai, anthropic or openai-compatible"),
            (&["--base-url", "http://x"], "--base-url needs --provider"),
            (&["--fresh", "--db", "h.db"], "--fresh starts a new conversation per line"),
        ];
        for (args, expected) in cases {
            let err = parse(args).unwrap_err();
            assert!(err.contains(expected), "{args:?}: {err}");
        }
        assert!(ChatArgs::parse(&[]).unwrap_err().contains("--model"));
    }

    #[test]
    fn provider_flags_pick_a_remote_model() {
        let argv: Vec<String> = ["--provider", "openai-compatible", "--base-url", "http://127.0.0.1:8080/v1", "--model", "smol"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let args = ChatArgs::parse(&argv).unwrap();
        let remote = RemoteArgs { kind: ProviderKind::OpenAiCompatible, base_url: Some("http://127.0.0.1:8080/v1".into()) };
        assert_eq!((args.model.as_str(), args.remote), ("smol", Some(remote)));
    }
}
