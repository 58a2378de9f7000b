#!/usr/bin/env bash
# The whole CL-ReLKT recipe on one setup: zero-shot score, teacher, student, and the three test scores.
#   bash trainers/reproduce.sh quickstart        # configs/quickstart.yaml + configs/quickstart_student.yaml (minutes; plumbing)
#   bash trainers/reproduce.sh quickstart_muse [SEED]  # configs/quickstart_muse*.yaml: the method at work, ~5 min; checked
#                                                      # against the README's expected ranges (trainers/check_expected.py)
#   bash trainers/reproduce.sh xquad_minilm      # configs/xquad_minilm_{teacher,student,student_*}.yaml (~7.5 h on 2 CPU cores)
#   bash trainers/reproduce.sh xquad_muse_cpu [SEED]  # CL-ReLKT's XQuAD tables: 5-fold cross-validation (trainers/crossval.py)
#                                                     # of configs/xquad_muse_cpu_*.yaml, cut to 2 CPU cores
#   bash trainers/reproduce.sh xquad_muse [SEED]      # the same with the paper's settings (configs/xquad_muse_*.yaml)
#   bash trainers/reproduce.sh xquad_muse_rows [SEED] # the same 5 folds and teachers (configs/xquad_muse_cpu_teacher.yaml),
#                                                     # the student learning el/hi/vi through their own token rows
#   bash trainers/reproduce.sh xquad_muse_pieces [SEED] # the same, with word-sized learned el/hi/vi pieces
#   bash trainers/reproduce.sh xquad_muse_pieces_e4 [SEED] # that student trained 4 epochs instead of 2
#   bash trainers/reproduce.sh xquad_muse_article [SEED] # the pieces student on teachers selected on dev article P@1
#                                                     # (configs/xquad_muse_article_*.yaml)
#   bash trainers/reproduce.sh xquad_muse_guarded [SEED] # those teachers; the student leaves names' rows alone
#                                                     # (configs/xquad_muse_guarded_student.yaml)
#   bash trainers/reproduce.sh new_languages [SEED]   # one student for bn te ta am km he fi sw (+ ja fr) from parallel text,
#                                                     # and the coverage report against zero-shot mUSE
#   bash trainers/reproduce.sh paper_muse [SEED]      # CL-ReLKT's own protocol: teacher on SQuAD train, students from
#                                                     # parallel text (+ an Apertium Spanish variant), all of XQuAD-R
#                                                     # scored whole, never trained on (configs/paper_muse_*.yaml)
set -euo pipefail
more_students=""
grow_students=""   # configs whose finished 2-epoch run is copied and trained on to 4 epochs (README: "Four epochs")
interpolate=no   # yes: also mix each student's last/ with the teacher (relkt.interpolate, alpha chosen on dev) and score it
setup="${1:?usage: $0 quickstart|quickstart_muse|paper_muse|new_languages|xquad_minilm|xquad_muse|xquad_muse_cpu|xquad_muse_rows|xquad_muse_pieces|xquad_muse_pieces_e4|xquad_muse_article|xquad_muse_guarded [SEED]}"
seed="${2:-}"   # a seed other than the configs' own: run folders get a _seedN suffix
expected=""
case "$setup" in
  quickstart) teacher=configs/quickstart.yaml; student=configs/quickstart_student.yaml; base=ngram ;;
  quickstart_muse) teacher=configs/quickstart_muse.yaml; student=configs/quickstart_muse_student.yaml; base=muse
                   expected=trainers/expected/quickstart_muse.yaml ;;
  xquad_minilm) teacher=configs/xquad_minilm_teacher.yaml; student=configs/xquad_minilm_student.yaml; base=minilm
                more_students="configs/xquad_minilm_student_vocab.yaml configs/xquad_minilm_student_contrast.yaml configs/xquad_minilm_student_contrast_vocab.yaml configs/xquad_minilm_student_contrast_pieces.yaml configs/xquad_minilm_student_contrast_pieces_han.yaml"
                grow_students="configs/xquad_minilm_student_contrast.yaml configs/xquad_minilm_student_contrast_pieces_han.yaml"
                interpolate=yes ;;
  xquad_muse|xquad_muse_cpu|xquad_muse_article)
    # CL-ReLKT's XQuAD tables: 5-fold article cross-validation of teacher and student, every question scored once.
    seed_set=(); [ -n "$seed" ] && seed_set=(--set "seed=$seed" --set "data.split_seed=$seed")
    out="runs/$setup${seed:+_seed$seed}/crossval"
    exec python trainers/crossval.py --folds 5 --teacher-config "configs/${setup}_teacher.yaml" \
      --student-config "configs/${setup}_student.yaml" --output "$out" "${seed_set[@]}" ;;
  xquad_muse_rows|xquad_muse_pieces|xquad_muse_pieces_e4|xquad_muse_guarded)
    # students of another setup's teachers: the CPU teachers, or the article-selected ones for the guarded student
    teacher_config=configs/xquad_muse_cpu_teacher.yaml
    [ "$setup" = xquad_muse_guarded ] && teacher_config=configs/xquad_muse_article_teacher.yaml
    seed_set=(); [ -n "$seed" ] && seed_set=(--set "seed=$seed" --set "data.split_seed=$seed")
    out="runs/$setup${seed:+_seed$seed}/crossval"
    exec python trainers/crossval.py --folds 5 --teacher-config "$teacher_config" \
      --student-config "configs/${setup}_student.yaml" --output "$out" "${seed_set[@]}" ;;
  paper_muse) exec bash trainers/paper_protocol.sh "$seed" ;;
  new_languages) exec bash trainers/new_languages.sh "$seed" ;;
  *) echo "unknown setup $setup; valid: quickstart, quickstart_muse, paper_muse, new_languages, xquad_minilm, xquad_muse, xquad_muse_cpu, xquad_muse_rows, xquad_muse_pieces, xquad_muse_pieces_e4, xquad_muse_article, xquad_muse_guarded" >&2; exit 2 ;;
esac
out_of() { python -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['output_dir'])" "$1"; }
t_out=$(out_of "$teacher"); s_out=$(out_of "$student")
root=$(dirname "$t_out")
t_set=(); s_set=()
if [ -n "$seed" ]; then
  root="${root}_seed$seed"; t_out="$root/$(basename "$t_out")"; s_out="$root/$(basename "$s_out")"
  t_set=(--set "seed=$seed" --set "output_dir=$t_out"); s_set=(--set "seed=$seed" --set "output_dir=$s_out")
fi
teacher_spec=$(python -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['teacher']['spec'].split(':')[0])" "$student")
s_set+=(--set "teacher.spec=$teacher_spec:$t_out/best")
python -m relkt.evaluate --encoder "$base" --split test --no-progress --output "$root/zero_shot_test.json"
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
for extra in $more_students; do
  e_out=$(out_of "$extra")
  python -m relkt.train_student --config "$extra"
  score_student "$e_out"
done
for grow in $grow_students; do
  g_out=$(out_of "$grow")
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
for run in "$t_out" "$s_out" $(for c in $more_students; do out_of "$c"; done); do
  echo "  $run/curves.png    dev curve, loss terms and learning rate; model in $run/best"
done
