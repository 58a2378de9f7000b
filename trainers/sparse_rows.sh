#!/usr/bin/env bash
# Lazy against dense Adam on a trainable token table (schedule.sparse_rows): configs/sparse_rows/teacher.yaml, then its
# student with mUSE's whole token table trainable (configs/sparse_rows/student.yaml) trained both ways from that one
# teacher, each scored on the test articles; McNemar on XX->EN P@1 per language, lazy against dense.
# Re-running resumes. Wall seconds of each step in runs/sparse_rows/wall_seconds.tsv.
#   bash trainers/reproduce.sh sparse_rows [SEED]      # (this script: bash trainers/sparse_rows.sh [SEED])
set -euo pipefail
seed="${1:-}"
root="runs/sparse_rows${seed:+_seed$seed}"
mkdir -p "$root"
walls="$root/wall_seconds.tsv"
timed() { local name=$1; shift; local t0; t0=$(date +%s); "$@"; printf '%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" >> "$walls"; }
seed_set=(); [ -n "$seed" ] && seed_set=(--set "seed=$seed")
timed teacher python -m relkt.train_teacher --config configs/sparse_rows/teacher.yaml --set "output_dir=$root/teacher" \
  "${seed_set[@]}"
results=()
for rows in dense lazy; do
  out="$root/student_$rows"
  timed "student_$rows" python -m relkt.train_student --config configs/sparse_rows/student.yaml \
    --set "output_dir=$out" --set "teacher.spec=muse:$root/teacher/best" --set "schedule.sparse_rows=$rows" \
    "${seed_set[@]}"
  python -m relkt.cli.evaluate --encoder "hub:$out/best" --split test --no-progress --output "$out/test.json"
  results+=("$out/test.json")
done
python trainers/compare.py "${results[@]}" --output "$root/comparison.md"
echo
echo "Open $root/comparison.md: the trainable-table student, dense Adam then lazy, with lazy's significance against dense"
