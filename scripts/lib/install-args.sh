# Sourced by the install scripts: parse_install_args NAME HELP_RANGE "$@" reads
# --prefix DIR, --profile release|dev and --reuse (and --help, which prints lines
# HELP_RANGE of the calling script) and sets prefix, profile, reuse (0 or 1) and outdir
# (cargo's output directory).
parse_install_args() {
    local name="$1" help="$2"
    shift 2
    prefix=""
    profile=release
    reuse=0
    while [ $# -gt 0 ]; do
        case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --profile) profile="$2"; shift 2 ;;
        --profile=*) profile="${1#--profile=}"; shift ;;
        --reuse) reuse=1; shift ;;
        -h | --help) sed -n "${help}p" "$0"; exit 0 ;;
        *) echo "$name: unknown argument '$1' (see --help)" >&2; exit 2 ;;
        esac
    done
    if [ -z "$prefix" ]; then
        echo "$name: --prefix DIR is required" >&2
        exit 2
    fi
    case "$profile" in
    release) outdir=release ;;
    dev | debug) profile=dev; outdir=debug ;;
    *) echo "$name: --profile must be release or dev" >&2; exit 2 ;;
    esac
}
