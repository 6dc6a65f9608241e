#!/usr/bin/env bash
# The demo resumes: 250 steps from scratch, then a rerun asked for 500 must start from the
# step-250 checkpoint. Usage: demo_resume.sh <demo program> <logdir>
set -uo pipefail
demo=$1 logdir=$2
"$demo" --logdir "$logdir" --fresh --steps 250 >/dev/null 2>&1   # exits 1 if still below 95%
out=$("$demo" --logdir "$logdir" --steps 500 2>&1)
rc=$?
echo "$out"
((rc == 0)) || { echo "FAIL: the resumed run exited with $rc"; exit 1; }
grep -qF "resuming from checkpoint $logdir/train/model.ckpt-250 at step 250 of 500" <<<"$out" ||
    { echo "FAIL: the rerun did not resume from the step-250 checkpoint"; exit 1; }
grep -qF "trained steps 250..500" <<<"$out" || { echo "FAIL: the rerun did not train steps 250..500"; exit 1; }
echo "PASS: resumed at step 250 and trained to 500"
