#!/usr/bin/env bash
# The whole CL-ReLKT recipe on one setup of configs/setups.yaml: zero-shot score, teacher, students, test scores.
#   bash trainers/reproduce.sh --list            # every setup: its recipe, configs and what it shows
#   bash trainers/reproduce.sh quickstart_muse   # the method at work, ~5 min on 2 cores
#   bash trainers/reproduce.sh NAME [SEED]       # a seed other than the configs' own: run folders get a _seedN suffix
#   RELKT_PRINT_ONLY=1 bash trainers/reproduce.sh NAME [SEED]   # print a pipeline's commands, run none
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
# Every command of a pipeline goes through `run`: RELKT_PRINT_ONLY=1 prints it instead.
run() { if [ -n "${RELKT_PRINT_ONLY:-}" ]; then printf '%q ' "$@"; echo; else "$@"; fi; }
t_out=$teacher_out; s_out=$student_out
root=$(dirname "$t_out")
t_set=(); s_set=()
if [ -n "$seed" ]; then
  root="${root}_seed$seed"; t_out="$root/$(basename "$t_out")"; s_out="$root/$(basename "$s_out")"
  t_set=(--set "seed=$seed" --set "output_dir=$t_out"); s_set=(--set "seed=$seed" --set "output_dir=$s_out")
fi
s_set+=(--set "teacher.spec=$teacher_kind:$t_out/best")
run python -m relkt.cli.evaluate --encoder "$zero_shot" --split test --no-progress --output "$root/zero_shot_test.json"
run python -m relkt.train_teacher --config "$teacher" "${t_set[@]}"
run python -m relkt.cli.evaluate --encoder "hub:$t_out/best" --split test --no-progress --output "$t_out/test.json" --card
# Students: best/ (selected on dev; the teacher's copy if training never beat it) and last/ (where training ended).
# last/ is scored only when it differs from best/ (the best evaluation was not the last step).
best_is_last() { [ -z "${RELKT_PRINT_ONLY:-}" ] || return 1; python -c "import json, sys; s = json.load(open(sys.argv[1])); sys.exit(0 if s['best']['step'] == s['steps'] else 1)" "$1/summary.json"; }
score_student() {
  run python -m relkt.cli.evaluate --encoder "hub:$1/best" --split test --no-progress --output "$1/test.json" --card
  results+=("$1/test.json")
  if ! best_is_last "$1"; then
    run python -m relkt.cli.evaluate --encoder "hub:$1/last" --split test --no-progress --output "$1/test_last.json"
    results+=("$1/test_last.json")
  fi
  if [ "$interpolate" = yes ]; then
    run python -m relkt.cli.interpolate --teacher "bert:$t_out/best" --student "bert:$1/last" --output "$1/wise"
    run python -m relkt.cli.evaluate --encoder "hub:$1/wise" --split test --no-progress --output "$1/test_wise.json"
    results+=("$1/test_wise.json")
  fi
}
results=("$root/zero_shot_test.json" "$t_out/test.json")
# A student's overrides: this run's teacher, and with a seed that seed and a run folder under the seeded root.
student_sets() {  # student_sets OUT -> the --set flags in `sets`
  sets=(--set "teacher.spec=$teacher_kind:$t_out/best")
  [ -z "$seed" ] || sets+=(--set "seed=$seed" --set "output_dir=$1")
}
seeded() { if [ -n "$seed" ]; then echo "$root/$(basename "$1")"; else echo "$1"; fi; }
run python -m relkt.train_student --config "$student" "${s_set[@]}"
score_student "$s_out"
for i in "${!more_students[@]}"; do  # the same overrides as the first student
  m_out=$(seeded "${more_outs[$i]}"); more_outs[i]=$m_out; student_sets "$m_out"
  run python -m relkt.train_student --config "${more_students[$i]}" "${sets[@]}"
  score_student "$m_out"
done
for i in "${!grow_students[@]}"; do
  grow=${grow_students[$i]}; g_out=$(seeded "${grow_outs[$i]}"); student_sets "${g_out}_e4"
  [ -d "${g_out}_e4" ] || run cp -r "$g_out" "${g_out}_e4"
  run python -m relkt.train_student --config "$grow" "${sets[@]}" --set "output_dir=${g_out}_e4" --set distill.epochs=4
  run python -m relkt.cli.evaluate --encoder "hub:${g_out}_e4/best" --split test --no-progress --output "${g_out}_e4/test.json"
  results+=("${g_out}_e4/test.json")
done
run python trainers/compare.py "${results[@]}" --output "$root/comparison.md"
if [ -n "$expected" ]; then
  run python trainers/check_expected.py "$expected" --zero-shot "$root/zero_shot_test.json" --teacher "$t_out/test.json" \
      --student "$s_out/test.json" || echo "WARNING: this run falls outside the README's expected ranges (above)"
fi
echo
echo "Open these:"
echo "  $root/comparison.md    the test scores side by side, with per-language significance"
for run in "$t_out" "$s_out" "${more_outs[@]}"; do
  echo "  $run/curves.png    dev curve, loss terms and learning rate; model in $run/best"
done
