#!/usr/bin/env bash
# CI stage (called by .ci/run): the report builds from the committed results
# and says what they say. Installs gnuplot, LaTeX and poppler-utils from
# Debian when missing (as root), runs the runner's and the report's unit
# tests, builds report/report.pdf with `make report` and checks it with
# report/check_report.py. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
step() { # step NAME COMMAND...
  local name=$1
  shift
  echo "== $name"
  if "$@"; then
    passed=$((passed + 1))
    echo "PASS  $name"
  else
    failed=$((failed + 1))
    echo "FAIL  $name"
  fi
}

need=(gnuplot-nox texlive-latex-base texlive-latex-recommended texlive-fonts-recommended poppler-utils)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "ci_report: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "ci_report: missing Debian packages: ${missing[*]} (not root: cannot install)"
  fi
fi

step "experiments: runner unit tests" python3 experiments/test_experiments.py
step "report: generator unit tests (synthetic results, full build)" python3 report/test_report.py
step "make report (committed results)" make report
check_out=$(mktemp)
python3 report/check_report.py | tee "$check_out"
check_rc=${PIPESTATUS[0]}
tail_line=$(tail -1 "$check_out")
rm -f "$check_out"
if [[ $tail_line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
  passed=$((passed + BASH_REMATCH[1]))
  failed=$((failed + BASH_REMATCH[2]))
else
  failed=$((failed + 1))
  echo "FAIL  report/check_report.py did not finish"
fi
[ "$check_rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
