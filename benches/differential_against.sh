#!/usr/bin/env bash
# Run the differential soundness fuzzer (tests/differential.rs) against the verifier
# as it was at another commit: the interpreter and the generator are copied into a
# worktree of that commit (they need only `syntax`, `check` and `verify_member`,
# whose API has not changed since ef90926), which is built in release mode.
#
#   benches/differential_against.sh ef90926 [N]
#
# prints the campaign's summary (unsound verdicts are written to that worktree's
# target/differential/) and which program showed the first unsound verdict.
set -euo pipefail
commit=${1:?usage: $0 COMMIT [N]}
n=${2:-400}
here=$(cd "$(dirname "$0")/.." && pwd)
wt=${DIFF_WORKTREE:-/tmp/idf-differential-$commit}
if [ ! -d "$wt" ]; then
  git -C "$here" worktree add --detach "$wt" "$commit"
fi
rm -rf "$wt/src/interp" "$wt/tests/differential"
cp -r "$here/src/interp" "$wt/src/"
cp -r "$here/tests/differential" "$here/tests/differential.rs" "$wt/tests/"
# Commits without counterexample replay count every candidate as a false alarm.
grep -q '^pub mod replay;' "$wt/src/lib.rs" || cat > "$wt/tests/differential/replay_check.rs" <<'STUB'
//! Stub: this commit has no counterexample replay.
use idf_verify::syntax::ast::{MemberRef, Program};
pub fn confirms(_: &Program, _: &str, _: MemberRef) -> bool {
    false
}
STUB
grep -q '^pub mod interp;' "$wt/src/lib.rs" || sed -i 's/^pub mod driver;/pub mod driver;\npub mod interp;/' "$wt/src/lib.rs"
grep -q '^num-bigint' "$wt/Cargo.toml" || (cd "$wt" && cargo add num-bigint@0.5 num-integer@0.1 num-traits@0.2)
rm -rf "$wt/target/differential"
cd "$wt"
DIFF_FUZZ_N=$n cargo test --release --test differential differential_campaign -- --ignored --nocapture 2>&1 \
  | grep -E '^[0-9]+ programs|^first unsound|^UNSOUND' || true
