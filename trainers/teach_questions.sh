#!/usr/bin/env bash
# Teaching questions without a translator (issue #45): the new_languages student from parallel text alone
# (configs/new_languages/student.yaml) beside the same student given XOR-TyDi's training questions too
# (configs/teach_questions/student_xor.yaml), and given its Bengali and Telugu pairs romanized too
# (configs/teach_questions/student_roman.yaml), and the XOR one with a ranking term over the batch
# (configs/teach_questions/student_xor_contrast.yaml) and over every training target
# (configs/teach_questions/student_xor_bank.yaml), each scored by relkt coverage on the XOR rows not marked train
# (bn fi ja te taught; ko ru ar as controls), held-out pairs and XQuAD-R whole: once against zero-shot mUSE, once
# against the parallel-text student. Re-running resumes the students and redoes the reports.
#   bash trainers/reproduce.sh teach_questions [SEED]      # (this script: bash trainers/teach_questions.sh [SEED])
set -euo pipefail
seed="${1:-}"
root="runs/teach_questions${seed:+_seed$seed}"
langs=bn,te,fi,ja,ko,ru,ar
mkdir -p "$root"
walls="$root/wall_seconds.tsv"
timed() { local name=$1; shift; local t0; t0=$(date +%s); "$@"; printf '%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" >> "$walls"; }
seed_set=(); [ -n "$seed" ] && seed_set=(--set "seed=$seed")
timed student_parallel python -m relkt.train_student --config configs/new_languages/student.yaml \
  --set "output_dir=$root/student_parallel" "${seed_set[@]}"
timed student_xor python -m relkt.train_student --config configs/teach_questions/student_xor.yaml \
  --set "output_dir=$root/student_xor" "${seed_set[@]}"
timed student_roman python -m relkt.train_student --config configs/teach_questions/student_roman.yaml \
  --set "output_dir=$root/student_roman" "${seed_set[@]}"
timed student_xor_contrast python -m relkt.train_student --config configs/teach_questions/student_xor_contrast.yaml \
  --set "output_dir=$root/student_xor_contrast" "${seed_set[@]}"
timed student_xor_bank python -m relkt.train_student --config configs/teach_questions/student_xor_bank.yaml \
  --set "output_dir=$root/student_xor_bank" "${seed_set[@]}"
coverage() {  # coverage NAME ENCODER...: the first encoder is what the others are compared with
  local name=$1; shift
  timed "coverage $name" python -m relkt.cli.coverage "$@" --langs "$langs" --pairs-dir ../shared/data/parallel \
    --dev-pairs 500 --questions-dir ../shared/data/xor-questions --center --test-dir ../shared/data/xquad-r \
    --learned bn,te,fi,ja --output "$root/$name"
}
coverage vs_zero_shot --encoder zero-shot=muse --encoder "parallel=muse:$root/student_parallel/best" \
  --encoder "parallel+xor=muse:$root/student_xor/best" --encoder "+contrast=muse:$root/student_xor_contrast/best" \
  --encoder "+bank=muse:$root/student_xor_bank/best"
coverage vs_parallel --encoder "parallel=muse:$root/student_parallel/best" \
  --encoder "parallel+xor=muse:$root/student_xor/best" --encoder "parallel+roman=muse:$root/student_roman/best" \
  --encoder "+contrast=muse:$root/student_xor_contrast/best" --encoder "+bank=muse:$root/student_xor_bank/best"
echo
echo "Open these:"
echo "  $root/vs_zero_shot/report.md   per language: XOR questions (held out), pairs, XQuAD-R; McNemar vs zero-shot"
echo "  $root/vs_parallel/report.md    the XOR-trained student against the parallel-text one"
