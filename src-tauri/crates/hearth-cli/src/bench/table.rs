//! `hearth-cli bench` without `--json`: the report as tables, each section that ran.

use super::{ConversationReport, Report, ServerReport};
use crate::switch::{SWITCH_TURNS, TYPING_CPS};

pub fn print(r: &Report) {
    println!("threads {}", r.threads);
    if let Some(s) = &r.speed {
        println!("prompt {} tokens", s.prompt_tokens);
        println!("{:<10} {:>12} {:>12} {:>8}", "", "raw tok/s", "engine tok/s", "ratio");
        println!("{:<10} {:>12.1} {:>12.1} {:>8.3}", "prefill", s.raw_prefill_tps, s.engine_prefill_tps, s.prefill_ratio);
        println!("{:<10} {:>12.1} {:>12.1} {:>8.3}", "decode", s.raw_decode_tps, s.engine_decode_tps, s.decode_ratio);
    }
    if let Some(c) = &r.conversation {
        conversation(c);
    }
    if let Some(s) = &r.switch {
        println!("\nChat A after {SWITCH_TURNS} turns: TTFT in ms");
        println!(
            "  hot {:.0}, after chat B {:.0} ({:?}, ÷ hot {:.2}), after a restart {:.0} ({:?}, ÷ hot {:.2})",
            s.switch_hot_ttft_ms,
            s.switch_back_ttft_ms,
            s.switch_back_source,
            s.switch_back_ttft_ratio,
            s.restart_ttft_ms,
            s.restart_source,
            s.restart_ttft_ratio
        );
    }
    if let Some(s) = &r.switch_server {
        println!(
            "  llama-server --cache-ram: hot {:.0}, after chat B {:.0} (÷ hot {:.2})",
            s.server_switch_hot_ttft_ms, s.server_switch_back_ttft_ms, s.server_cache_ram_switch_ttft_ratio
        );
    }
    if let Some(t) = &r.typing {
        println!(
            "  turn {SWITCH_TURNS} typed at {TYPING_CPS} characters/s, read ahead: TTFT {:.0} ms ({:?})",
            t.typing_ttft_ms, t.typing_source
        );
    }
    if let Some(p) = &r.parallel {
        println!(
            "\nHearth's server, 4 clients at once: {:.1} tok/s, one at a time {:.1} (÷ {:.2}); replies as alone: {}",
            p.parallel4_tps, p.single_client_tps, p.parallel4_vs_single, p.parallel4_outputs_identical
        );
        if let (Some(server), Some(ratio)) = (p.server_parallel4_tps, p.parallel4_vs_server) {
            println!("  llama-server --parallel 4: {server:.1} tok/s at once (Hearth ÷ server {ratio:.2})");
        }
    }
    if let Some(d) = &r.decoding {
        println!(
            "\nPrompt lookup: edit {:.1} tok/s vs {:.1} plain (× {:.2}, {:.0} % of drafts kept), free chat {:.1} vs {:.1} (× {:.2}); same replies: {}",
            d.lookup_edit_tps,
            d.plain_edit_tps,
            d.lookup_speedup_edit,
            d.lookup_acceptance_edit * 100.0,
            d.lookup_chat_tps,
            d.plain_chat_tps,
            d.lookup_speedup_chat,
            d.lookup_outputs_identical
        );
        if let Some(m) = &d.draft_model {
            println!(
                "Draft model: edit × {:.2} ({:.0} % of drafts kept), free chat × {:.2} ({:.0} %); same replies: {}",
                m.draft_speedup_edit,
                m.draft_acceptance_edit * 100.0,
                m.draft_speedup_chat,
                m.draft_acceptance_chat * 100.0,
                m.draft_outputs_identical
            );
        }
        println!("Consensus of 8: {:.0} ms vs one sampled reply {:.0} ms (× {:.2})", d.mbr8_ms, d.single_sampled_ms, d.mbr8_time_ratio);
    }
    if let Some(b) = &r.busy_core {
        println!(
            "\nA core kept busy by another program: {:.1} tok/s with measured decode threads, {:.1} with every core (× {:.2}); \
             nothing else running: measured ÷ every core {:.2}",
            b.busy_core_decode_tps, b.busy_core_fixed_threads_decode_tps, b.busy_core_speedup, b.quiet_tuned_decode_ratio
        );
    }
    if let Some(t) = &r.tools {
        println!(
            "\nA tool round: round two's first token {:.0} ms after the result (round one {:.0} ms); it read {} tokens, {:.2} × the result's",
            t.tool_round_overhead_ms, t.tool_round_one_ttft_ms, t.tool_round_read_tokens, t.tool_round_cached_ratio
        );
        println!(
            "  with a 100 ms tool, its result's turn read ahead meanwhile: {:.0} ms (it read {} tokens)",
            t.tool_round_read_ahead_ms, t.tool_round_read_ahead_tokens
        );
        if let (Some(ms), Some(ratio)) = (t.tool_round_server_ms, t.tool_round_vs_server) {
            println!("  llama-server reading the same result: {ms:.0} ms (Hearth × {ratio:.2})");
        }
    }
    if let Some(a) = &r.attach {
        println!(
            "\nA document attached ({} tokens): the next question's first token in {:.0} ms, × {:.2} a chat without one \
             (it read {} tokens; the first question {:.0} ms)",
            a.attach_document_tokens, a.attach_second_ttft_ms, a.attach_ttft_ratio, a.attach_second_read_tokens, a.attach_first_ttft_ms
        );
        if let (Some(ratio), Some(ms)) = (a.server_attach_ttft_ratio, a.server_attach_second_ttft_ms) {
            println!("  llama-server, the same exchanges: {ms:.0} ms, × {ratio:.2} a chat without one");
        }
    }
    if let Some(x) = &r.retrieve {
        println!(
            "\nRetrieval: a document indexed at {:.1} MB/s; a question over {} passages in {:.1} ms (p95; median {:.1} ms), \
             by words and meaning {:.1} ms (p95; median {:.1} ms)",
            x.index_mb_per_s,
            x.retrieve_passages,
            x.retrieve_p95_ms,
            x.retrieve_median_ms,
            x.retrieve_meaning_p95_ms,
            x.retrieve_meaning_median_ms
        );
    }
    for failed in &r.failed_sections {
        println!("\nFAILED {}: {}", failed.section, failed.error);
        for (what, value) in [("server", &failed.server), ("request", &failed.request)] {
            if let Some(value) = value {
                println!("  {what}: {value}");
            }
        }
        if let Some(status) = failed.status {
            println!("  status: {status}");
        }
        if !failed.server_log.is_empty() {
            println!("  its last lines:");
            for line in &failed.server_log {
                println!("    {line}");
            }
        }
    }
}

fn conversation(c: &ConversationReport) {
    println!("\nTTFT in ms, request sent → first text");
    println!(
        "{:>4} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "turn", "prompt", "cached", "reuse", "no reuse", "srv cache", "srv none", "÷ srv"
    );
    for i in 0..c.ttft_ms_reuse.len() {
        let server = |pick: fn(&ServerReport) -> &Vec<f64>| c.server.as_ref().and_then(|s| pick(s).get(i).copied()).unwrap_or(f64::NAN);
        println!(
            "{:>4} {:>7} {:>7} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>7.3}",
            i + 1,
            c.prompt_tokens_per_turn[i],
            c.cached_tokens[i],
            c.ttft_ms_reuse[i],
            c.ttft_ms_no_reuse.get(i).copied().unwrap_or(f64::NAN),
            server(|s| &s.ttft_ms_cache),
            server(|s| &s.ttft_ms_no_cache),
            server(|s| &s.ttft_ratio_vs_cached_server),
        );
    }
}
