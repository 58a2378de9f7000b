#!/usr/bin/env bash
# The whole CL-ReLKT recipe on one setup of configs/setups.yaml: zero-shot score, teacher, students, test scores.
#   bash trainers/reproduce.sh --list            # every setup: its recipe, configs and what it shows
#   bash trainers/reproduce.sh quickstart_muse   # the method at work, ~5 min on 2 cores
#   bash trainers/reproduce.sh NAME [SEED]       # a seed other than the configs' own: run folders get a _seedN suffix
# A `crossval` setup runs trainers/crossval.py over its article folds, a `script` setup its own recipe
# (trainers/paper_protocol.sh, trainers/new_languages.sh); a `pipeline` setup runs below. Rerunning resumes.
set -euo pipefail
if [ "${1:-}" = --list ] || [ -z "${1:-}" ]; then
  python trainers/setups.py --list
  [ -n "${1:-}" ] || { echo "usage: $0 NAME [SEED]" >&2; exit 2; }
  exit 0
fi
setup="$1"
seed="${2:-}"
assignments=$(python trainers/setups.py shell "$setup") || exit 2
eval "$assignments"   # recipe teacher student *_out zero_shot folds more_students grow_students interpolate ...
case "$recipe" in
  crossval)
    # CL-ReLKT's XQuAD tables: k-fold article cross-validation of teacher and student, every question scored once.
    seed_set=(); [ -n "$seed" ] && seed_set=(--set "seed=$seed" --set "data.split_seed=$seed")
    exec python trainers/crossval.py --setup "$setup" --output "runs/$setup${seed:+_seed$seed}/crossval" "${seed_set[@]}" ;;
  script) exec bash "$script" "$seed" ;;
esac
t_out=$teacher_out; s_out=$student_out
root=$(dirname "$t_out")
t_set=(); s_set=()
if [ -n "$seed" ]; then
  root="${root}_seed$seed"; t_out="$root/$(basename "$t_out")"; s_out="$root/$(basename "$s_out")"
  t_set=(--set "seed=$seed" --set "output_dir=$t_out"); s_set=(--set "seed=$seed" --set "output_dir=$s_out")
fi
s_set+=(--set "teacher.spec=$teacher_kind:$t_out/best")
python -m relkt.evaluate --encoder "$zero_shot" --split test --no-progress --output "$root/zero_shot_test.json"
python -m relkt.train_teacher --config "$teacher" "${t_set[@]}"
python -m relkt.evaluate --encoder "hub:$t_out/best" --split test --no-progress --output "$t_out/test.json"
# Students: best/ (selected on dev; the teacher's copy if training never beat it) and last/ (where training ended).
# last/ is scored only when it differs from best/ (the best evaluation was not the last step).
best_is_last() { python -c "import json, sys; s = json.load(open(sys.argv[1])); sys.exit(0 if s['best']['step'] == s['steps'] else 1)" "$1/summary.json"; }
score_student() {
  python -m relkt.evaluate --encoder "hub:$1/best" --split test --no-progress --output "$1/test.json"
  results+=("$1/test.json")
  if ! best_is_last "$1"; then
    python -m relkt.evaluate --encoder "hub:$1/last" --split test --no-progress --output "$1/test_last.json"
    results+=("$1/test_last.json")
  fi
  if [ "$interpolate" = yes ]; then
    python -m relkt.interpolate --teacher "bert:$t_out/best" --student "bert:$1/last" --output "$1/wise"
    python -m relkt.evaluate --encoder "hub:$1/wise" --split test --no-progress --output "$1/test_wise.json"
    results+=("$1/test_wise.json")
  fi
}
results=("$root/zero_shot_test.json" "$t_out/test.json")
python -m relkt.train_student --config "$student" "${s_set[@]}"
score_student "$s_out"
for i in "${!more_students[@]}"; do
  python -m relkt.train_student --config "${more_students[$i]}"
  score_student "${more_outs[$i]}"
done
for i in "${!grow_students[@]}"; do
  grow=${grow_students[$i]}; g_out=${grow_outs[$i]}
  [ -d "${g_out}_e4" ] || cp -r "$g_out" "${g_out}_e4"
  python -m relkt.train_student --config "$grow" --set "output_dir=${g_out}_e4" --set distill.epochs=4
  python -m relkt.evaluate --encoder "hub:${g_out}_e4/best" --split test --no-progress --output "${g_out}_e4/test.json"
  results+=("${g_out}_e4/test.json")
done
python trainers/compare.py "${results[@]}" --output "$root/comparison.md"
if [ -n "$expected" ]; then
  python trainers/check_expected.py "$expected" --zero-shot "$root/zero_shot_test.json" --teacher "$t_out/test.json" \
      --student "$s_out/test.json" || echo "WARNING: this run falls outside the README's expected ranges (above)"
fi
echo
echo "Open these:"
echo "  $root/comparison.md    the test scores side by side, with per-language significance"
for run in "$t_out" "$s_out" "${more_outs[@]}"; do
  echo "  $run/curves.png    dev curve, loss terms and learning rate; model in $run/best"
done
