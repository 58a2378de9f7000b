#!/usr/bin/env bash
# The paper's teacher at the paper's scale (configs/paper_scale_muse/): trained on all of SQuAD v1.1 train, then it
# and zero-shot mUSE-small scored on both LAReQA pools whole, XQuAD-R and MLQA-R (MLQA dev), which it never saw:
# LAReQA mAP and the XX->EN protocol at the article and paragraph units. Re-running resumes the teacher where it
# stopped; finished scores newer than the model they scored are kept.
#   bash trainers/reproduce.sh paper_scale_muse [SEED]      # (this script: bash trainers/paper_scale.sh [SEED])
set -euo pipefail
seed="${1:-}"
root="runs/paper_scale_muse${seed:+_seed$seed}"
data="${RELKT_SHARED_DATA:-../shared/data}"
mkdir -p "$root"
walls="$root/wall_seconds.tsv"   # stage<TAB>seconds, one line per stage this invocation ran
timed() { local name=$1; shift; local t0; t0=$(date +%s); "$@"; printf '%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" >> "$walls"; }
score() {  # score NAME ENCODER POOL_DIR OUTPUT
  if [ -f "$4" ] && { [ "$2" = muse ] || [ "$4" -nt "${2#*:}" ]; }; then echo "kept $4"; return; fi
  timed "score $1" python -m relkt.cli.evaluate --encoder "$2" --data-dir "$3" --split all \
    --xx-en-unit article,paragraph --no-progress --output "$4"
}
# shellcheck disable=SC2046
timed teacher python -m relkt.train_teacher --config configs/paper_scale_muse/teacher.yaml \
  --set "output_dir=$root/teacher" ${seed:+--set seed=$seed}
for pool in xquad-r mlqa; do
  dir="$data/$pool"; [ "$pool" = mlqa ] && dir="$data/mlqa/dev"
  score "zero-shot $pool" muse "$dir" "$root/zero_shot_$pool.json"
  score "teacher $pool" "muse:$root/teacher/best" "$dir" "$root/teacher/$pool.json"
  python trainers/compare.py "$root/zero_shot_$pool.json" "$root/teacher/$pool.json" --xx-en-unit article \
    --against first --output "$root/comparison_$pool.md"
done
# The students (configs/paper_scale_muse/student*.yaml), one change at a time: the paper's protocol on this teacher,
# + questions written natively in ar zh th tr, + MLQA test's cross-language questions; each scored on both pools and
# compared with the teacher and the one before it.
previous=teacher
for student in student student_native student_native_mlqa; do
  # shellcheck disable=SC2046
  timed "$student" python -m relkt.train_student --config "configs/paper_scale_muse/$student.yaml" \
    --set "output_dir=$root/$student" --set "teacher.spec=muse:$root/teacher/best" ${seed:+--set seed=$seed}
  for pool in xquad-r mlqa; do
    dir="$data/$pool"; [ "$pool" = mlqa ] && dir="$data/mlqa/dev"
    score "$student $pool" "muse:$root/$student/best" "$dir" "$root/$student/$pool.json"
    files=("$root/teacher/$pool.json"); [ "$previous" = teacher ] || files+=("$root/$previous/$pool.json")
    python trainers/compare.py "${files[@]}" "$root/$student/$pool.json" --xx-en-unit article \
      --output "$root/comparison_${student}_$pool.md"
  done
  previous=$student
done
echo "Open these: $root/comparison_*.md (McNemar: the teacher against zero-shot, each student against the teacher and the one before it); $walls"
