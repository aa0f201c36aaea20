//! Build script: runs LALRPOP on `grammar/idf.lalrpop`, writing the parser to `$OUT_DIR/idf.rs`.
//!
//! Architecture invariant: the generated parser never lands in the source tree.
fn main() {
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .emit_rerun_directives(true)
        .process()
        .expect("LALRPOP failed on grammar/idf.lalrpop");
}
