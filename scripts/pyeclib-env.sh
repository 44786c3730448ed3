#!/usr/bin/env bash
# Prepares pyeclib for the engine tests and benchmarks of libisal.so.2: a Python virtual
# environment in DIR with pyeclib built from its PyPI source against Debian's
# liberasurecode (liberasurecode-dev), and pyeclib's own test suite unpacked in
# DIR/pyeclib-src. Prints the environment's python. Does nothing when DIR is ready.
#
#   scripts/pyeclib-env.sh DIR
set -euo pipefail
version=1.8.0
dir="${1:?usage: pyeclib-env.sh DIR}"
python="$dir/bin/python"
if [ -x "$python" ] && [ -f "$dir/.ready-$version" ]; then
    echo "$python"
    exit 0
fi
[ -f /usr/include/liberasurecode/erasurecode.h ] || {
    echo "pyeclib-env: liberasurecode's headers are missing (apt-get install liberasurecode-dev)" >&2
    exit 1
}
py="$(command -v python3)" || { echo "pyeclib-env: python3 is needed" >&2; exit 1; }
rm -rf "$dir"
"$py" -m venv "$dir" >&2
# From source (not the wheel, which carries its own liberasurecode and ISA-L), so the
# engine is Debian's liberasurecode loading libisal.so.2 by name.
"$python" -m pip install --quiet --no-binary pyeclib "pyeclib==$version" >&2
"$python" -m pip download --quiet --no-binary :all: --no-deps "pyeclib==$version" -d "$dir/sdist" >&2
mkdir -p "$dir/pyeclib-src"
tar xzf "$dir/sdist/pyeclib-$version.tar.gz" -C "$dir/pyeclib-src" --strip-components=1
"$python" -c 'import pyeclib_c' >&2
touch "$dir/.ready-$version"
echo "$python"
