# libFuzzer targets, included by the Makefile.
#
#   make fuzz-build                  build every fuzz/fuzz_<name>.c into build-fuzz/bin/
#   make fuzz [FUZZ_SECONDS=20]      build, then run each target for FUZZ_SECONDS
#             [FUZZ_TARGETS="a b"]   (only these targets)
#
# The targets and the parsers they reach are compiled with clang and
# -fsanitize=fuzzer,address,undefined into build-fuzz/, apart from the normal
# and the SANITIZE=1 builds. Each run starts from the committed seed corpus
# (fuzz/corpus/<name>/) and the past findings (fuzz/regressions/<name>/);
# the inputs it finds go to build-fuzz/corpus/<name>/, crashing inputs to
# build-fuzz/artifacts/<name>/. fuzz/run.sh prints libFuzzer's stats per
# target, appends one JSON line per target (executions, seconds, crashes) to
# build-fuzz/fuzz-summary.jsonl and ends with "N passed, N failed".
# A finding is fixed in the code and its input kept in fuzz/regressions/,
# which the unit tests replay (tests/test_fuzz_regressions.c).

FUZZ_CC      ?= clang
FUZZ_CXX     ?= clang++
FUZZ_SECONDS ?= 20
FUZZ_BUILD   ?= build-fuzz
FUZZ_SANS    := address,undefined
FUZZ_CFLAGS  := -std=c11 -O1 -g -Wall -Wextra -fno-omit-frame-pointer -pthread \
                -fno-sanitize-recover=undefined
FUZZ_CPPFLAGS := -D_GNU_SOURCE -DVPT_FUZZ_BUILD -I. -I$(CUDA_HOME)/include
FUZZ_LDLIBS  := -ljansson -lpng16 -lexpat -lcrypto -lz -lm -lstdc++ -pthread

# The parsers the targets reach (and what those call). Sources of modules
# that are not there yet are simply absent from the wildcards.
FUZZ_LIB_SRCS := $(wildcard base/*.c) $(wildcard scenes/volume*.c scenes/formats/volume*.c) \
                 $(wildcard scenes/mitsuba/mitsuba_xml.c scenes/mitsuba/mitsuba_tree.c scenes/mitsuba/mitsuba_props.c) \
                 image/image.c codegen/config.c physics/density_format.c physics/sparse_grid.c tuner/estimators.c \
                 harness/results.c $(wildcard $(addprefix tuner/,cache.c rows.c eval.c replay.c space.c sequences.c pool.c lanes.c)) \
                 $(wildcard cli/scene_args.c cli/gpus_arg.c) $(wildcard scenes/scene*.c scenes/phantoms/phantom*.c \
                 scenes/mitsuba/mitsuba_scene.c) $(wildcard scenes/env_map.c)
FUZZ_LIB_OBJS := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o) $(LIB_CXX_SRCS:%.cc=$(FUZZ_BUILD)/obj/%.o)
FUZZ_LIB      := $(FUZZ_BUILD)/libvptune-fuzz.a
FUZZ_SRCS     := $(wildcard fuzz/fuzz_*.c)
FUZZ_NAMES    := $(FUZZ_SRCS:fuzz/fuzz_%.c=%)
FUZZ_BINS     := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/bin/fuzz_%) $(FUZZ_BUILD)/bin/config_answer
# Targets in Python (experiment specs) run through fuzz/run.sh as well.
FUZZ_PY_NAMES := $(patsubst fuzz/fuzz_%.py,%,$(wildcard fuzz/fuzz_*.py))
# volume_dicom and volume_vdb run GDCM and OpenVDB (Debian's builds, not
# instrumented) behind the fault boundary (base/isolate.h): GDCM's
# assertions and OpenVDB's allocations of the lengths a file states end a
# child process, not the fuzzer (docs/decisions/fuzz-third-party-parsers.md).
# env_map_exr runs OpenEXR (Debian's OpenEXRCore) behind the same boundary,
# in a worker, thousands of inputs a second (docs/decisions/fuzz-openexr-env-maps.md).
# volume_dicom and env_map_exr run by default. volume_vdb is built but not run by default:
# it forks a child per input (OpenVDB leaks when a read fails part way, so a
# long-lived worker would fill up), a few executions a second; run it on
# purpose with FUZZ_TARGETS=volume_vdb.
FUZZ_TARGETS  ?= $(filter-out volume_vdb,$(FUZZ_NAMES)) $(FUZZ_PY_NAMES)

.PHONY: fuzz fuzz-build fuzz-corpus fuzz-clean
fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) sh fuzz/run.sh $(FUZZ_TARGETS)

# Regenerates the committed seed corpus (fuzz/corpus/) from its generator.
fuzz-corpus:
	python3 fuzz/make_corpus.py fuzz/corpus
	@mkdir -p $(BUILD) fuzz/corpus/volume_nanovdb
	$(CC) $(CPPFLAGS) -std=c11 -O2 fuzz/nanovdb_seeds.c physics/sparse_grid.c base/error.c -lz -lm -o $(BUILD)/nanovdb_seeds
	rm -f fuzz/corpus/volume_nanovdb/* && $(BUILD)/nanovdb_seeds fuzz/corpus/volume_nanovdb
	@mkdir -p fuzz/corpus/env_map_exr
	$(CC) -D_GNU_SOURCE -std=c11 -O2 fuzz/exr_seeds.c -lOpenEXRCore -lm -o $(BUILD)/exr_seeds
	rm -f fuzz/corpus/env_map_exr/* && $(BUILD)/exr_seeds fuzz/corpus/env_map_exr

fuzz-clean:
	rm -rf $(FUZZ_BUILD)

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SANS) -MMD -MP -c $< -o $@

# The library's C++ file (NanoVDB's checksum code, see the Makefile); without
# UBSan's vptr check, whose runtime the C link of the targets lacks.
$(FUZZ_BUILD)/obj/%.o: %.cc
	@mkdir -p $(@D)
	$(FUZZ_CXX) -std=c++17 -O1 -g -Wall -Wextra -fno-omit-frame-pointer -pthread -I. \
	    -fsanitize=fuzzer-no-link,$(FUZZ_SANS) -fno-sanitize=vptr -fno-sanitize-recover=undefined -MMD -MP -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/bin/fuzz_%: $(FUZZ_BUILD)/obj/fuzz/fuzz_%.o $(FUZZ_LIB)
	@mkdir -p $(@D)
	$(FUZZ_CC) -fsanitize=fuzzer,$(FUZZ_SANS) $^ $(FUZZ_LDLIBS) -o $@

# The C config parser as a filter, for the differential check of the Python
# one (experiments/vptexp.py) in fuzz_experiment_spec.py.
$(FUZZ_BUILD)/bin/config_answer: $(FUZZ_BUILD)/obj/fuzz/config_answer.o $(FUZZ_LIB)
	@mkdir -p $(@D)
	$(FUZZ_CC) -fsanitize=fuzzer-no-link,$(FUZZ_SANS) $^ $(FUZZ_LDLIBS) -o $@

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_SRCS:fuzz/%.c=$(FUZZ_BUILD)/obj/fuzz/%.d) $(FUZZ_BUILD)/obj/fuzz/config_answer.d

# Keep the targets' objects (make would delete them as intermediates).
.SECONDARY: $(FUZZ_SRCS:fuzz/%.c=$(FUZZ_BUILD)/obj/fuzz/%.o) $(FUZZ_BUILD)/obj/fuzz/config_answer.o
