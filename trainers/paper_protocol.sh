#!/usr/bin/env bash
# CL-ReLKT's own protocol (Sec. 4), as far as this machine's data allows: the teacher learns from English SQuAD train
# (configs/paper_muse/teacher.yaml), the students from parallel text (configs/paper_muse/student.yaml, and
# configs/paper_muse/student_apertium.yaml with Apertium's Spanish questions, configs/paper_muse/student_codeswitch.yaml
# with code-switched SQuAD-train questions, and both again with a ranking term over every training target:
# configs/paper_muse/student_bank.yaml, configs/paper_muse/student_codeswitch_bank.yaml), and every model is scored
# on the whole of XQuAD-R (48 articles, 1,190 questions a language), which none of them saw: XX->EN at the article
# unit (the paper's table; P@1 with McNemar's test) and LAReQA mAP. Re-running resumes: finished runs and scores are
# kept.
#   bash trainers/reproduce.sh paper_muse [SEED]      # (this script: bash trainers/paper_protocol.sh [SEED])
set -euo pipefail
seed="${1:-}"
root="runs/paper_muse${seed:+_seed$seed}"
mkdir -p "$root"
walls="$root/wall_seconds.tsv"   # stage<TAB>seconds, one line per stage this invocation ran
timed() { local name=$1; shift; local t0; t0=$(date +%s); "$@"; printf '%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" >> "$walls"; }
sets() { [ -n "$seed" ] && echo "--set seed=$seed --set output_dir=$root/$1" || echo "--set output_dir=$root/$1"; }
# Scores a model on the test source of the run's config; kept while newer than the model it scored.
score() {  # score NAME ENCODER CONFIG OUTPUT
  if [ -f "$4" ] && { [ "$2" = muse ] || [ "$4" -nt "${2#*:}" ]; }; then echo "kept $4"; return; fi
  timed "score $1" python -m relkt.cli.evaluate --encoder "$2" --config "$3" --split test --no-progress --output "$4"
}
results=()
score zero-shot muse configs/paper_muse/teacher.yaml "$root/zero_shot_test.json"; results+=("$root/zero_shot_test.json")
# shellcheck disable=SC2046
timed teacher python -m relkt.train_teacher --config configs/paper_muse/teacher.yaml $(sets teacher)
score teacher "muse:$root/teacher/best" "$root/teacher/config.yaml" "$root/teacher/test.json"; results+=("$root/teacher/test.json")
# + code-switched SQuAD-train questions; + a ranking term over every training target; both (issue #45)
students=(student student_codeswitch student_bank student_codeswitch_bank)
if command -v apertium >/dev/null 2>&1 && apertium -l 2>/dev/null | grep -qx ' *eng-spa'; then
  students+=(student_apertium)
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && apt-get install -y -q apertium apertium-eng-spa >/dev/null 2>&1; then
  students+=(student_apertium)
else
  echo "skipped configs/paper_muse/student_apertium.yaml: no apertium eng-spa here and it could not be installed (apt-get install apertium apertium-eng-spa)"
fi
for name in "${students[@]}"; do
  # shellcheck disable=SC2046
  timed "$name" python -m relkt.train_student --config "configs/paper_muse/$name.yaml" $(sets "$name") \
    --set "teacher.spec=muse:$root/teacher/best"
  score "$name" "muse:$root/$name/best" "$root/$name/config.yaml" "$root/$name/test.json"; results+=("$root/$name/test.json")
done
python trainers/compare.py "${results[@]}" --xx-en-unit article --against first --output "$root/comparison.md"
echo
echo "Open these:"
echo "  $root/comparison.md    XQuAD-R whole: LAReQA mAP and XX->EN article P@1 per language, McNemar against zero-shot"
echo "  $walls    wall time of each stage"
