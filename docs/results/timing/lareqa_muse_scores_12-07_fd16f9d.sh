#!/bin/bash
# The nine score steps of `relkt reproduce lareqa_muse` (same flags), on the d0ad145 run's models, at main's commit.
cd /work/main
OUT=/tmp/scores9; rm -rf $OUT; mkdir -p $OUT
R=/work/wt113/runs/lareqa_muse; D=../shared/data
echo "start $(date +%s) at $(git rev-parse --short HEAD)" > /work/scores9.times
for pool in xquad-r xquad-r-eight mlqa-r; do
  case $pool in
    xquad-r) where="--data-dir $D/xquad-r --split all --xx-en-unit article,paragraph";;
    xquad-r-eight) where="--data-dir $D/xquad-r --split all --xx-en-unit article,paragraph --langs ar,de,en,es,ru,th,tr,zh";;
    mlqa-r) where="--data-dir $D/mlqa/dev --split all --xx-en-unit article,paragraph";;
  esac
  for m in zero_shot teacher student; do
    case $m in zero_shot) spec=muse;; teacher) spec=muse:$R/teacher/best;; student) spec=muse:$R/student/best;; esac
    t=$(date +%s)
    nice -n -5 python -m relkt.cli.evaluate --encoder $spec $where --rank-adjust auto --no-progress --output $OUT/${m}_$pool.json > $OUT/${m}_$pool.log 2>&1
    echo "$m $pool rc=$? $(( $(date +%s) - t )) s" >> /work/scores9.times
  done
done
echo "end $(date +%s)" >> /work/scores9.times
