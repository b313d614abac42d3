#!/bin/sh
# Builds report/report.pdf from results/ (no GPU needed): generate the LaTeX
# and gnuplot inputs, draw the figures, typeset. Called by `make report`.
#   report/build.sh            (REPORT_GPU=h200 picks a results folder)
# After generating, every \verdict of the prose is checked against the
# numbers it cites (report/verdicts.py); a disagreement stops the build, since
# the text would then argue what the data no longer shows. REPORT_VERDICTS=off
# skips that (report/test_report.py does, for its synthetic numbers).
# Missing tools are installed with apt-get when running as root; otherwise
# the script stops naming the Debian packages to install.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

# tool or LaTeX file -> Debian package
missing=""
need() { # need CHECK PACKAGE
  if ! eval "$1" >/dev/null 2>&1; then
    case " $missing " in *" $2 "*) ;; *) missing="$missing $2" ;; esac
  fi
}
check_tools() {
  missing=""
  need "command -v $PYTHON" python3
  need "command -v gnuplot" gnuplot-nox
  need "command -v pdflatex" texlive-latex-base
  need "command -v kpsewhich" texlive-latex-base
  for sty in booktabs xcolor caption microtype; do
    need "test -n \"\$(kpsewhich $sty.sty)\"" texlive-latex-recommended
  done
  need "test -n \"\$(kpsewhich ptmr8t.tfm)\"" texlive-fonts-recommended
}
check_tools
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "report: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
    check_tools
  fi
  if [ -n "$missing" ]; then
    echo "report: missing Debian packages:$missing" >&2
    echo "report: install them (apt-get install$missing) and run make report again" >&2
    exit 1
  fi
fi

$PYTHON report/generate.py
if ! $PYTHON report/verdicts.py > report/verdicts.log; then
  grep '^FAIL' report/verdicts.log >&2
  if [ "${REPORT_VERDICTS:-on}" != off ]; then
    echo "report: a verdict of the prose disagrees with the numbers it cites (report/verdicts.log): revise the" \
         "sentence in report/report.tex or report/discussion.tex (REPORT_VERDICTS=off builds it anyway," \
         "each such verdict flagged in red)" >&2
    exit 1
  fi
  echo "report: REPORT_VERDICTS=off: building anyway, the verdicts above flagged in red in the text" >&2
fi
tail -1 report/verdicts.log
(
  cd report/generated
  while read -r fig; do
    gnuplot "$fig.gp" || { echo "report: gnuplot failed on report/generated/$fig.gp" >&2; exit 1; }
  done < figures.txt
)
cd report
for pass in 1 2; do
  if ! pdflatex -interaction=nonstopmode -halt-on-error report.tex > report.build.log 2>&1; then
    grep -n -A5 '^!' report.build.log | head -40 >&2 || true
    echo "report: pdflatex failed (pass $pass); see report/report.build.log" >&2
    exit 1
  fi
done
if grep -q 'There were undefined references\|Reference .* undefined' report.log; then
  grep 'undefined' report.log >&2
  echo "report: undefined references" >&2
  exit 1
fi
echo "report: report/report.pdf ($(grep -o 'Output written on report.pdf ([0-9]* pages' report.log | grep -o '[0-9]* pages'))"
