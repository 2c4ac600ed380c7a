//! Embeds the schema's migrations (migrations/VERSION_DESCRIPTION.sql) as store.rs's list of
//! `(version, description, SQL)`, read as sqlx's `migrate!` reads them, and rebuilds when they change.

use std::path::Path;
use std::{env, fs};

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../migrations");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("the migrations folder")
        .map(|entry| entry.expect("a migration file").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sql"))
        .collect();
    files.sort();
    let mut list = String::from("&[\n");
    for path in files {
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("a UTF-8 file name");
        let (version, description) = stem.split_once('_').expect("migrations are named VERSION_DESCRIPTION.sql");
        let version: i64 = version.parse().expect("a migration's version is a number");
        let path = path.canonicalize().expect("the migration file");
        list += &format!("    ({version}, {:?}, include_str!({:?})),\n", description.replace('_', " "), path.display().to_string());
    }
    list += "]\n";
    fs::write(Path::new(&env::var("OUT_DIR").expect("OUT_DIR")).join("migrations.rs"), list).expect("writing migrations.rs");
}
