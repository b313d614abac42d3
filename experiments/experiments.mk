# Experiments (GPU): experiments/*.spec run by experiments/run, resumable. They use
# the programs in bin/ as built (make -j), without rebuilding them: on a GPU
# machine that got bin/ from the build machine nothing is compiled.
#   make experiments                  every part below, in order, at one commit
#   make experiments-part PART=thesis one part, stopped at $(PART_DEADLINE) s (exit 4: run it again)
#   make experiments-parts            the parts and what each runs
#   make experiment NAME=t43_regeneration
#   make experiments-list             what each experiment measures
#   make experiments DRY=1            print the commands only
#
# The parts. A GPU machine may be lent for 10 minutes a call, so the whole run
# is cut into parts, each one experiments/run call with --deadline: it starts
# nothing after PART_DEADLINE seconds and stops a running bench at it (the
# rows bench appended stay), exiting 4; the same command goes on from there.
# Every part is safe to repeat: a measurement done at this commit is skipped.
# Order matters once: transfer needs every occupancy part, best_vs_roofline
# the saved tunes (results/<gpu>/best/, else another GPU's). Durations: see
# experiments/README.md ("Parts").
EXPERIMENTS_FLAGS := $(if $(DRY),--dry-run)
PART_DEADLINE ?= 540
PART_thesis      := roofline t41_kernels t43_regeneration t45_compaction t46_sorting t61_gpu_vs_cpu \
                    t62_smoke t63_bucky
PART_tiling      := t42_tiling
PART_registers   := t44_registers compaction_depth tuner_convergence
PART_coherence   := sorting_coherence
PART_occupancy1  := --scene cgg-logo occupancy
PART_occupancy2  := --scene ad occupancy
PART_occupancy3  := --scene artifix occupancy
PART_occupancy4  := --scene manix occupancy
PART_occupancy5  := --scene smoke occupancy
PART_occupancy6  := --scene bucky occupancy
PART_transfer    := transfer best_vs_roofline
PART_estimators  := estimators
# Asynchronous flights against the rounds, per estimator (96 evaluations,
# two of the scenes 512^3).
PART_async       := async_flights
# The order a launch hands out its paths in (paths=sample|pixel), 130
# evaluations, two of the scenes 512^3.
PART_paths       := path_order
# One head at 128^3 .. 1024^3 (issue 17): tuned per size, then the schedules
# beside each size's winner, then Nsight Compute's hit rates.
PART_large_tune  := large_tune
PART_large       := large_schedules
PART_large_ncu   := large_coherence
EXPERIMENT_PARTS := thesis tiling registers coherence occupancy1 occupancy2 occupancy3 occupancy4 \
                    occupancy5 occupancy6 transfer estimators async paths large_tune large large_ncu

.PHONY: experiments experiment experiments-list experiments-part experiments-parts
experiments:
	@for p in $(EXPERIMENT_PARTS); do \
	  echo "== part $$p"; \
	  $(MAKE) --no-print-directory experiments-part PART=$$p PART_DEADLINE= || exit $$?; \
	done

experiments-part:
	@test -n "$(PART_$(PART))" || { echo "make experiments-part PART=<part>; parts: $(EXPERIMENT_PARTS)"; exit 2; }
	python3 experiments/run $(EXPERIMENTS_FLAGS) $(if $(PART_DEADLINE),--deadline $(PART_DEADLINE)) $(PART_$(PART))

experiments-parts:
	@$(foreach p,$(EXPERIMENT_PARTS),echo "$(p): experiments/run $(PART_$(p))";)

experiment:
	@test -n "$(NAME)" || { echo "make experiment NAME=<experiment> (see make experiments-list)"; exit 2; }
	python3 experiments/run $(EXPERIMENTS_FLAGS) $(NAME)

experiments-list:
	python3 experiments/run --list
