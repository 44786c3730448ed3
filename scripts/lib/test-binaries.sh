# Sourced by the test scripts: test_binaries PACKAGES TARGETS -- CARGO_ARGS... builds
# (or finds already built) the test executables of `cargo test CARGO_ARGS --no-run` and
# prints one line per executable of a package in PACKAGES (comma-separated crate names)
# whose target is in TARGETS (comma-separated target names, or * for all):
#
#   package target executable package-directory
#
# Running the executables of one cargo command rather than a second `cargo test -p ...`
# keeps the build of the first: cargo settles features per command, so a command naming
# other packages may compile shared crates again with other features.
test_binaries() {
    local packages="$1" targets="$2"
    shift 3
    cargo test "$@" --no-run --message-format=json 2>/dev/null |
        PACKAGES="$packages" TARGETS="$targets" python3 -c '
import json, os, sys
packages = os.environ["PACKAGES"].split(",")
targets = os.environ["TARGETS"].split(",")
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    name = m["target"]["name"]
    directory = os.path.dirname(m["manifest_path"])
    # path+file:///DIR#NAME@VERSION, or path+file:///DIR#VERSION where NAME is DIR.
    tail = m["package_id"].rsplit("#", 1)[-1]
    package = tail.split("@", 1)[0] if "@" in tail else os.path.basename(directory)
    if package not in packages:
        continue
    if targets != ["*"] and name not in targets:
        continue
    print(package, name, m["executable"], directory)
'
}
