#!/usr/bin/env bash
# The whole CL-ReLKT recipe on one setup: zero-shot score, teacher, student, and the three test scores.
#   bash trainers/reproduce.sh quickstart        # configs/quickstart.yaml + configs/quickstart_student.yaml (minutes)
#   bash trainers/reproduce.sh xquad_minilm      # configs/xquad_minilm_{teacher,student,student_vocab}.yaml (~2 h on 2 CPU cores)
set -euo pipefail
more_students=""
setup="${1:?usage: $0 quickstart|xquad_minilm|xquad_muse}"
case "$setup" in
  quickstart) teacher=configs/quickstart.yaml; student=configs/quickstart_student.yaml; base=ngram ;;
  xquad_minilm) teacher=configs/xquad_minilm_teacher.yaml; student=configs/xquad_minilm_student.yaml; base=minilm
                more_students=configs/xquad_minilm_student_vocab.yaml ;;  # the same student with vocabulary extension
  xquad_muse) teacher=configs/xquad_muse_teacher.yaml; student=configs/xquad_muse_student.yaml; base=muse ;;
  *) echo "unknown setup $setup; valid: quickstart, xquad_minilm, xquad_muse" >&2; exit 2 ;;
esac
out_of() { python -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['output_dir'])" "$1"; }
t_out=$(out_of "$teacher"); s_out=$(out_of "$student")
root=$(dirname "$t_out")
python -m relkt.evaluate --encoder "$base" --split test --no-progress --output "$root/zero_shot_test.json"
python -m relkt.train_teacher --config "$teacher"
python -m relkt.evaluate --encoder "hub:$t_out/best" --split test --no-progress --output "$t_out/test.json"
# Students: best/ (selected on dev; the teacher's copy if training never beat it) and last/ (where training ended).
score_student() {
  python -m relkt.evaluate --encoder "hub:$1/best" --split test --no-progress --output "$1/test.json"
  python -m relkt.evaluate --encoder "hub:$1/last" --split test --no-progress --output "$1/test_last.json"
}
python -m relkt.train_student --config "$student"
score_student "$s_out"
results=("$root/zero_shot_test.json" "$t_out/test.json" "$s_out/test.json" "$s_out/test_last.json")
for extra in $more_students; do
  e_out=$(out_of "$extra")
  python -m relkt.train_student --config "$extra"
  score_student "$e_out"
  results+=("$e_out/test.json" "$e_out/test_last.json")
done
python trainers/compare.py "${results[@]}"
