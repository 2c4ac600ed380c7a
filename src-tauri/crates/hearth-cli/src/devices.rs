//! `hearth-cli devices`: the compute devices the engine finds here, and the backends it could not
//! use, in the engine's own process (where a GPU driver that fails costs only that process).

use hearth_core::DeviceReport;
use hearth_engine::Engine;

pub async fn run(args: &[String]) -> Result<(), String> {
    let json = match args {
        [] => false,
        [flag] if flag == "--json" => true,
        _ => return Err("usage: hearth-cli devices [--json]".into()),
    };
    let report = Engine::spawn().devices().await;
    if json {
        println!("{}", serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?);
    } else {
        print!("{}", describe(&report));
    }
    if report.devices.is_empty() { Err("no compute device: the model cannot run here".into()) } else { Ok(()) }
}

fn describe(report: &DeviceReport) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    let mut out = String::new();
    for d in &report.devices {
        out += &format!(
            "{:<10} {:<8} {:?}  {}  ({:.1} GiB free of {:.1})\n",
            d.name,
            d.backend,
            d.kind,
            d.description,
            d.free_bytes as f64 / GIB,
            d.total_bytes as f64 / GIB
        );
    }
    if let Some(dir) = &report.modules_dir {
        out += &format!("backends from {dir}\n");
    }
    for p in &report.problems {
        out += &format!("not used: {}: {}\n", p.module, p.reason);
    }
    out
}
