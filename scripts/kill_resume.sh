#!/usr/bin/env bash
# A replayed tune killed with SIGKILL at random moments and resumed on the
# same cache must end as an uninterrupted one: the same rows (byte for byte,
# so the same costs), the same charged seconds and the same winner
# (docs/tuner-record.md). Runs bin/tune itself, as a user would, KILLS times
# (default 50): each time a tune on a fresh cache is killed at a uniformly
# random moment of an uninterrupted run's wall time, then resumed to the
# end and compared. Prints one line per kill and the verdict; exit 0 when
# every resumed tune matched.
#
#   scripts/kill_resume.sh [KILLS] [FIXTURE]      (after make all)
#
# VPT_TUNE names another bin/tune to check (default bin/tune).
set -u
kills=${1:-50}
fixture=${2:-tests/fixtures/tuner/manix_exhaustive.jsonl}
tune=("${VPT_TUNE:-bin/tune}" --replay "$fixture" --strategy local --seed 1 --budget 90s --no-save --quiet)
tmp=$(mktemp -d /tmp/vptune-kill-resume.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# what a tune ends with: its evaluations and charged seconds, the table of
# the best, and the simulated clock
summary() { sed -e 's/ ([0-9]* from the cache)//' -n -e '/^local:/,/^simulated/p' "$1"; }

start=$(date +%s.%N)
"${tune[@]}" --cache "$tmp/ref.jsonl" > "$tmp/ref.out" || { echo "kill_resume: the uninterrupted tune failed"; exit 1; }
run_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
echo "kill_resume: uninterrupted: $(sed -n 's/^local: //p' "$tmp/ref.out") ($run_s s of wall time here)"

landed=0 failed=0 attempts=0
while [ "$landed" -lt "$kills" ] && [ "$attempts" -lt $((4 * kills)) ]; do
  attempts=$((attempts + 1))
  rm -f "$tmp/cut.jsonl"
  delay=$(awk -v r="$RANDOM" -v t="$run_s" 'BEGIN { printf "%.3f", t * r / 32767 }')
  "${tune[@]}" --cache "$tmp/cut.jsonl" > /dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  status=$?
  [ "$status" -eq 137 ] || continue # it had finished: not a kill
  landed=$((landed + 1))
  rows=0 # a kill before the header was written leaves no file
  [ -s "$tmp/cut.jsonl" ] && rows=$(($(wc -l < "$tmp/cut.jsonl") - 1))
  "${tune[@]}" --cache "$tmp/cut.jsonl" > "$tmp/resumed.out" 2> "$tmp/resumed.err"
  verdict=ok
  if ! cmp -s "$tmp/cut.jsonl" "$tmp/ref.jsonl"; then verdict="other rows"
  elif ! cmp -s <(summary "$tmp/resumed.out") <(summary "$tmp/ref.out"); then verdict="other charged seconds or winner"
  fi
  [ "$verdict" = ok ] || failed=$((failed + 1))
  echo "kill $landed: after ${delay} s, ${rows} rows on disk; resumed: $(sed -n 's/^local: //p' "$tmp/resumed.out"): $verdict"
done
if [ "$failed" -eq 0 ] && [ "$landed" -eq "$kills" ]; then
  echo "kill_resume: PASS: $landed SIGKILLs, every resumed tune has the uninterrupted one's rows, charged seconds and winner"
  exit 0
fi
echo "kill_resume: FAIL: $landed SIGKILLs landed (of $kills wanted), $failed resumed tunes differ"
exit 1
