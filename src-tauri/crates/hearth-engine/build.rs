//! Puts llama.cpp's shared libraries beside this build's binaries and test binaries, which find
//! them there (an rpath of `$ORIGIN`, .cargo/config.toml). llama-cpp-sys-2 links them there
//! itself only when no file of that name exists yet, so a rebuilt llama.cpp would leave the old
//! one in place: each is replaced here whenever the build's copy changes.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_LLAMA_GGML_CMAKE_DIR");
    // llama-cpp-sys-2 says where it installed ggml's CMake package: `<its out dir>/lib/cmake`.
    let Some(cmake_dir) = std::env::var_os("DEP_LLAMA_GGML_CMAKE_DIR") else {
        println!("cargo:warning=llama-cpp-sys-2 did not say where its libraries are; binaries may not find libllama.so");
        return;
    };
    let lib_dir = Path::new(&cmake_dir).parent().expect("<out>/lib/cmake has a parent").to_path_buf();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let profile_dir = out_dir.ancestors().nth(3).expect("OUT_DIR is inside the target dir").to_path_buf();
    let libraries = std::fs::read_dir(&lib_dir).expect("llama-cpp-sys-2's lib dir").filter_map(|e| e.ok().map(|e| e.path()));
    // libllama.so, and libllama.so.0 with its link where the libraries carry versions.
    for library in libraries.filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(".so"))) {
        println!("cargo:rerun-if-changed={}", library.display());
        let name = library.file_name().expect("a file");
        for dir in [profile_dir.clone(), profile_dir.join("deps")] {
            replace(&library, &dir.join(name))
                .unwrap_or_else(|e| panic!("{} could not be put in {}: {e}", library.display(), dir.display()));
        }
    }
}

/// Makes `dst` what `src` is: the same link, or the same file (a hard link, else a copy).
fn replace(src: &Path, dst: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(dst);
    match std::fs::read_link(src) {
        Ok(target) => std::os::unix::fs::symlink(target, dst),
        Err(_) => std::fs::hard_link(src, dst).or_else(|_| std::fs::copy(src, dst).map(drop)),
    }
}
