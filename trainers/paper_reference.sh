#!/usr/bin/env bash
# CL-ReLKT's own protocol (as trainers/paper_protocol.sh) with its reference code's settings: the SQuAD-train teacher
# (configs/paper_muse_reference/teacher.yaml), then one student per language group of setups.yaml's
# paper_muse_reference (trainers/group_students.py), each language scored on the whole of XQuAD-R by its group's
# student; McNemar against zero-shot and the paper's table beside it. Re-running resumes.
#   bash trainers/reproduce.sh paper_muse_reference [SEED]      # (this script: bash trainers/paper_reference.sh [SEED])
set -euo pipefail
seed="${1:-}"
root="runs/paper_muse_reference${seed:+_seed$seed}"
mkdir -p "$root"
walls="$root/wall_seconds.tsv"   # stage<TAB>seconds, one line per stage this invocation ran
timed() { local name=$1; shift; local t0; t0=$(date +%s); "$@"; printf '%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" >> "$walls"; }
seed_set=(); [ -n "$seed" ] && seed_set=(--set "seed=$seed")
score() {  # score NAME ENCODER CONFIG OUTPUT: kept while newer than the model it scored
  if [ -f "$4" ] && { [ "$2" = muse ] || [ "$4" -nt "${2#*:}" ]; }; then echo "kept $4"; return; fi
  timed "score $1" python -m relkt.cli.evaluate --encoder "$2" --config "$3" --split test --no-progress --output "$4"
}
score zero-shot muse configs/paper_muse_reference/teacher.yaml "$root/zero_shot.json"
timed teacher python -m relkt.train_teacher --config configs/paper_muse_reference/teacher.yaml \
  --set "output_dir=$root/teacher" "${seed_set[@]}"
score teacher "muse:$root/teacher/best" "$root/teacher/config.yaml" "$root/teacher.json"
timed students python trainers/group_students.py --setup paper_muse_reference --output "$root" --paper-table \
  --set "teacher.spec=muse:$root/teacher/best" "${seed_set[@]}"
python trainers/compare.py "$root/zero_shot.json" "$root/teacher.json" "$root/student.json" --xx-en-unit article \
  --against first --output "$root/comparison.md"
echo
echo "Open these:"
echo "  $root/paper_table.md   per language: the paper's P@1 beside relkt's, McNemar, LAReQA mAP"
echo "  $root/comparison.md    XQuAD-R whole, McNemar against zero-shot; $walls: wall time of each stage"
