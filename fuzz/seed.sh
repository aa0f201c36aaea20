#!/bin/sh
# Fills fuzz/corpus/<target>/ (not committed) with the project's .jv programs as seeds:
# examples/*.jv and tests/programs/**/*.jv. Run from anywhere; re-running adds nothing new.
set -e
here=$(cd "$(dirname "$0")" && pwd)
for target in front_end verify; do
  mkdir -p "$here/corpus/$target"
  find "$here/../examples" "$here/../tests/programs" -name '*.jv' -size -8k | while read -r f; do
    cp "$f" "$here/corpus/$target/$(echo "$f" | sed "s|^$here/../||; s|/|_|g")"
  done
done
ls "$here/corpus/front_end" | wc -l
