# bash completion for vptune's render, bench and tune (installed by `make
# install` as share/bash-completion/completions/{render,bench,tune}; or
# `source scripts/vptune-completion.bash`).
#
# Everything is asked of the programs themselves, once per shell, so that it
# cannot drift from them: the options from `TOOL --help`, the built-in scene
# names from its scene list, the config keys, their values and the thesis
# names from the messages of the one config parser (bench --precompile
# --config ..., which opens no GPU). Completes option names, scene names
# after --scene and --like, files after --volume (folders too: DICOM series),
# --scene-file, -o, --configs, --replay and --cache, and after --config the
# thesis names, "best", KEY= and KEY=VALUE (also after a comma).

_vptune_words() { # $1: tool path; prints "opts|scenes"
    local help
    help=$("$1" --help 2>/dev/null) || return
    local opts scenes
    opts=$(printf '%s\n' "$help" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' ')
    scenes=$(printf '%s\n' "$help" | sed -n '/^\(Built-in scenes\|Scenes\):/,$p' | tail -n +2 |
             awk '{print $1}' | grep -v '^$' | tr '\n' ' ')
    opts=$(printf '%s\n' $opts -o --help --version | sort -u | tr '\n' ' ')
    printf '%s|%s' "$opts" "$scenes"
}

# The config keys, their allowed values and the thesis names, from bench.
_vptune_config_words() { # $1: bench path; sets _vptune_cfg_names, _vptune_cfg_keys, _vptune_cfg_<key>
    [ -n "${_vptune_cfg_keys:-}" ] && return
    local msg k allowed
    msg=$("$1" --precompile --arch sm_90 --config '?' 2>&1)
    _vptune_cfg_keys=$(printf '%s' "$msg" | sed -n 's/.*(keys: \([^)]*\)).*/\1/p' | tr -d ',')
    _vptune_cfg_names=$(printf '%s' "$msg" | sed -n 's/.*thesis name (\([^)]*\)).*/\1/p' | tr -d ',')
    for k in $_vptune_cfg_keys; do
        msg=$("$1" --precompile --arch sm_90 --config "$k=?" 2>&1)
        allowed=$(printf '%s' "$msg" | sed -n 's/.*(allowed: \(.*\))$/\1/p')
        # "none, thread, warp" lists values; "0 (off), 1, 2, 4" too (the
        # parenthesized notes dropped); a range ("24..255") offers its ends
        allowed=$(printf '%s' "$allowed" | sed 's/([^)]*)//g; s/a multiple of 32 in//; s/ or / /g' |
                  tr ',' ' ' | sed 's/\([0-9][0-9]*\)\.\.\([0-9][0-9]*\)/\1 \2/g')
        printf -v "_vptune_cfg_$k" '%s' "$allowed"
    done
}

_vptune_complete() {
    local cur prev tool words
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    tool=${COMP_WORDS[0]}
    command -v "$tool" >/dev/null 2>&1 || return
    local cache_var="_vptune_w_${tool##*/}"
    cache_var=${cache_var//-/_}
    if [ -z "${!cache_var:-}" ]; then printf -v "$cache_var" '%s' "$(_vptune_words "$tool")"; fi
    words=${!cache_var}
    local opts=${words%%|*} scenes=${words#*|}
    case "$prev" in
        --scene|--like)
            COMPREPLY=($(compgen -W "$scenes" -- "$cur")); return ;;
        --volume)
            COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
        --scene-file|-o|--output|--configs|--replay|--cache|--t4|--export-mitsuba|--export-nvdb|--fixtures)
            COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
        --transfer)
            COMPREPLY=($(compgen -W "auto ct linear identity" -- "$cur")); return ;;
        --type)
            COMPREPLY=($(compgen -W "u8 i8 u16 i16 u32 i32 f32 f64" -- "$cur")); return ;;
        --strategy)
            COMPREPLY=($(compgen -W "exhaustive random local annealing genetic halving" -- "$cur")); return ;;
        --gpus)
            COMPREPLY=($(compgen -W "all 0 0,1 0,1,2,3" -- "$cur")); return ;;
        --config)
            local bench=bench
            [[ "$tool" == */* ]] && bench=${tool%/*}/bench
            _vptune_config_words "$bench"
            local head="" last=$cur
            if [[ "$cur" == *,* ]]; then head=${cur%,*},; last=${cur##*,}; fi
            if [[ "$last" == *=* ]]; then
                local key=${last%%=*} var="_vptune_cfg_${last%%=*}"
                COMPREPLY=($(compgen -P "$head$key=" -W "${!var:-}" -- "${last#*=}"))
            else
                local cand="" k
                for k in $_vptune_cfg_keys; do cand="$cand $k="; done
                [ -z "$head" ] && cand="$cand best $_vptune_cfg_names"
                [ -n "$head" ] && cand="$cand $_vptune_cfg_names"
                COMPREPLY=($(compgen -P "$head" -W "$cand" -- "$last"))
            fi
            compopt -o nospace 2>/dev/null
            return ;;
    esac
    if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); fi
}

complete -F _vptune_complete render bench tune
