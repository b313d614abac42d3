# The report: report/report.pdf from results/ (no GPU). See report/build.sh.
#   make report                 build it (installs gnuplot/LaTeX as root, else names the packages)
#   make report REPORT_GPU=h200 from results/h200 (default: the folder whose report_session.json names
#                               the newest session, else the folder with the most results)
#   make report-check           build it, then check it against results/ (report/check_report.py)
REPORT_GPU ?=
.PHONY: report report-check report-clean
report:
	REPORT_GPU=$(REPORT_GPU) sh report/build.sh

report-check: report
	REPORT_GPU=$(REPORT_GPU) python3 report/check_report.py

report-clean:
	rm -rf report/generated report/report.pdf report/report.aux report/report.log report/report.out \
	       report/report.build.log report/verdicts.log
