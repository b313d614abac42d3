# Experiments (GPU): experiments/*.spec run by experiments/run, resumable. They use
# the programs in bin/ as built (make -j), without rebuilding them: on a GPU
# machine that got bin/ from the build machine nothing is compiled.
#   make experiments                  every implemented experiment
#   make experiment NAME=t43_regeneration
#   make experiments-list             what each measures
#   make experiments DRY=1            print the commands only
EXPERIMENTS_FLAGS := $(if $(DRY),--dry-run)
.PHONY: experiments experiment experiments-list
experiments:
	python3 experiments/run $(EXPERIMENTS_FLAGS) all

experiment:
	@test -n "$(NAME)" || { echo "make experiment NAME=<experiment> (see make experiments-list)"; exit 2; }
	python3 experiments/run $(EXPERIMENTS_FLAGS) $(NAME)

experiments-list:
	python3 experiments/run --list
