#!/usr/bin/env bash
# openmpi_carry.sh: carry Debian's OpenMPI runtime to a machine without a
# package registry (the GPU machines).
#
# Contract:
#   scripts/openmpi_carry.sh [PREFIX]        (default PREFIX: .mpi)
#     On a machine WITH apt: downloads the runtime .debs (openmpi-bin,
#     libopenmpi3 and the shared libraries they depend on, as resolved by
#     apt-cache depends --recurse) with `apt-get download`, unpacks each with
#     `dpkg -x` into PREFIX (git-ignored), then prints the environment.
#     If PREFIX already holds an unpacked runtime (PREFIX/usr/bin/mpirun), no
#     download is attempted: this is the mode used on the GPU machine, where
#     PREFIX was carried along (run's `carry`).
#   eval "$(scripts/openmpi_carry.sh)" exports OPAL_PREFIX, PATH and
#     LD_LIBRARY_PATH (and silences one PMIx notice) so that `mpirun` and MPI-linked binaries use only PREFIX.
#
# Why OPAL_PREFIX: OpenMPI finds its plugins and help files relative to the
# install prefix compiled in (/usr); OPAL_PREFIX=PREFIX/usr relocates it to
# the unpacked tree. Checked here (Debian bookworm, OpenMPI 4.1.4): 21 MB
# unpacked; `mpirun --oversubscribe -np 2 hostname` with only PREFIX runs. Errors go to stderr and exit non-zero; a failed download
# leaves no half-unpacked PREFIX (unpacking happens in a temp dir, then moved).
set -euo pipefail

prefix=${1:-.mpi}
case $prefix in /*) ;; *) prefix=$PWD/$prefix ;; esac

if [ ! -x "$prefix/usr/bin/mpirun" ]; then
    command -v apt-get >/dev/null || { echo "openmpi_carry.sh: $prefix has no unpacked runtime and apt-get is missing" >&2; exit 1; }
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    # The runtime closure, minus what every Debian system already has
    # (libc, libgcc, libstdc++): those are not relocated and must match the host.
    # Left out as well: ssh (single-node runs need no remote launch agent) and
    # hwloc's optional plugins (they pull X11 and ICU, 40 MB, past run's 64 MiB carry).
    skip='^(libc6|libgcc-s1|libstdc\+\+6|gcc-.*-base|debconf.*|perl.*|dpkg|tar|adduser|passwd|openssh-client|libhwloc-plugins)$'
    pkgs="" queue="openmpi-bin libopenmpi3"
    while [ -n "$queue" ]; do
        set -- $queue; p=$1; shift; queue="$*"
        case " $pkgs " in *" $p "*) continue ;; esac
        pkgs="$pkgs $p"
        for d in $(apt-cache depends "$p" | awk '$1 ~ /^\|?(Pre)?Depends:$/ && $2 !~ /^</ {print $2}'); do
            echo "$d" | grep -qE "$skip" || queue="$queue $d"
        done
    done
    [ -n "$pkgs" ] || { echo "openmpi_carry.sh: apt-cache resolved no packages for openmpi-bin" >&2; exit 1; }
    (cd "$work" && apt-get download $pkgs >/dev/null 2>&1) \
        || { echo "openmpi_carry.sh: apt-get download failed (run apt-get update?)" >&2; exit 1; }
    mkdir -p "$work/root"
    for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/root"; done
    # Debian names the launchers mpirun.openmpi/mpiexec.openmpi and makes the
    # plain names through update-alternatives, which dpkg -x does not run.
    ln -sf mpirun.openmpi "$work/root/usr/bin/mpirun"
    ln -sf mpiexec.openmpi "$work/root/usr/bin/mpiexec"
    [ -x "$work/root/usr/bin/mpirun" ] || { echo "openmpi_carry.sh: unpacked packages hold no usr/bin/mpirun" >&2; exit 1; }
    rm -rf "$work/root/usr/share/doc" "$work/root/usr/share/man"
    rm -rf "$prefix"
    mkdir -p "$(dirname "$prefix")"
    mv "$work/root" "$prefix"
fi

arch=$(ls -d "$prefix"/usr/lib/*-linux-gnu 2>/dev/null | head -n1)
[ -n "$arch" ] || { echo "openmpi_carry.sh: $prefix/usr/lib/*-linux-gnu missing" >&2; exit 1; }
ompi=$arch/openmpi
echo "export OPAL_PREFIX=$prefix/usr"
# PMIx warns (through a help file it looks for under /usr) that its optional
# zlib compression plugin is unavailable; nothing depends on it.
echo "export PMIX_MCA_pcompress_base_silence_warning=1"
echo "export PATH=$prefix/usr/bin:\$PATH"
echo "export LD_LIBRARY_PATH=$ompi/lib:$arch:$prefix/lib/$(basename "$arch")\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
