//! Build script: runs LALRPOP on `grammar/idf.lalrpop`, writing the parser to `$OUT_DIR/idf.rs`,
//! and sets `IDF_BUILD_ID`, a hash of every file the binary is built from (the result
//! cache's tool identity: `src/cache/key.rs`).
//!
//! Architecture invariant: the generated parser never lands in the source tree.
fn main() {
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .emit_rerun_directives(true)
        .process()
        .expect("LALRPOP failed on grammar/idf.lalrpop");
    build_id();
}

/// `IDF_BUILD_ID`: SHA3-256 over the paths and bytes of `src/**`, `grammar/**`,
/// `build.rs`, `Cargo.toml` and `Cargo.lock` (in sorted order). The version string stays
/// 0.1.0 while the code changes; this changes with any edit, so a verdict cached by an
/// older build is never read by a newer one.
fn build_id() {
    use sha3::{Digest, Sha3_256};
    let mut files = vec![];
    for dir in ["src", "grammar"] {
        println!("cargo:rerun-if-changed={dir}");
        walk(std::path::Path::new(dir), &mut files);
    }
    for f in ["build.rs", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={f}");
        files.push(std::path::PathBuf::from(f));
    }
    files.sort();
    let mut h = Sha3_256::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        h.update(f.to_string_lossy().as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let id: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=IDF_BUILD_ID={id}");
}

fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}
