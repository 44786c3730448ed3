# Sourced by the test scripts: install_missing WHO PACKAGE... installs the Debian packages
# named (the caller lists only the missing ones) with apt-get, as root; otherwise it says
# what is missing and exits 2. WHO names the calling script in messages.
install_missing() {
    local who="$1"
    shift
    [ $# -gt 0 ] || return 0
    if [ "$(id -u)" != 0 ]; then
        echo "$who: missing packages: $* (install them as root)" >&2
        exit 2
    fi
    # Another install may be under way (CI runs the emulated CPU's set-up beside other
    # steps): wait for dpkg's lock rather than fail.
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null
}
