#!/usr/bin/env bash
# New-language coverage: one `muse` student for bn te ta am km he fi sw (ja, fr as controls) from parallel text alone
# (configs/new_languages/student.yaml), then relkt coverage of zero-shot mUSE against it on every one of those
# languages: tokenizer, held-out pairs both ways, XOR-TyDi questions (bn fi ja te), and XQuAD-R whole, where no
# language was taught (did it forget?). Re-running resumes the student and redoes the report.
#   bash trainers/reproduce.sh new_languages [SEED]      # (this script: bash trainers/new_languages.sh [SEED])
set -euo pipefail
seed="${1:-}"
root="runs/new_languages${seed:+_seed$seed}"
langs=bn,te,ta,am,km,he,fi,sw,ja,fr
mkdir -p "$root"
walls="$root/wall_seconds.tsv"
timed() { local name=$1; shift; local t0; t0=$(date +%s); "$@"; printf '%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" >> "$walls"; }
sets=(--set "output_dir=$root/student"); [ -n "$seed" ] && sets+=(--set "seed=$seed")
timed student python -m relkt.train_student --config configs/new_languages/student.yaml "${sets[@]}"
timed coverage python -m relkt.cli.coverage --encoder zero-shot=muse --encoder "student=muse:$root/student/best" \
  --langs "$langs" --pairs-dir ../shared/data/parallel --dev-pairs 500 --questions-dir ../shared/data/xor-questions \
  --test-dir ../shared/data/xquad-r --learned "$langs" --output "$root/coverage"
echo
echo "Open these:"
echo "  $root/coverage/report.md     per language: tokenizer, held-out pairs, XOR questions, XQuAD-R; McNemar vs zero-shot"
echo "  $root/coverage/coverage.png  before/after bars"
