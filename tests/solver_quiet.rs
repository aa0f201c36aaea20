//! The solver never writes to the user's terminal: a trigger that reaches a Java
//! integer division (which the solver sees as a conditional, and Z3 rejects in a
//! pattern with a warning on stderr) is left out by the verifier itself.

use std::process::Command;

const PROGRAM: &str = r#"
class D {
  static pure bool has(int[] a, int lo, int hi, int x)
    requires a != null && 0 <= lo && lo <= hi && hi <= a.length;
    requires forall int i :: lo <= i && i < hi ==> acc(a[i], 1/2);
    ensures result == (exists int i :: lo <= i && i < hi && a[i] == x);
    decreases hi - lo;
  { return lo != hi && (a[lo] == x || has(a, lo + 1, hi, x)); }

  static void m(int[] a)
    requires a != null && a.length >= 2 && acc(a[*]);
  {
    int mid = a.length / 2;
    bool b = has(a, 0, mid, 3);
    assert b ==> (exists int i :: 0 <= i && i < a.length && a[i] == 3);
    int r = mid % 2;
    bool c = has(a, r, mid, 4);
    assert c ==> (exists int i :: 0 <= i && i < a.length && a[i] == 4);
  }
}
"#;

#[test]
fn a_trigger_under_a_division_gives_no_solver_warning() {
    let dir = std::env::temp_dir().join(format!("idf-solver-quiet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("div_trigger.jv");
    std::fs::write(&file, PROGRAM).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_idf-verify"))
        .args(["--jobs", "1"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("2 verified"), "{stdout}");
    assert!(!stderr.contains("WARNING"), "the solver wrote to stderr:\n{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
