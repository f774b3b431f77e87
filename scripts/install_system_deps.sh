#!/usr/bin/env bash
# Install the system packages the arena sandbox needs (bubblewrap). Idempotent: does nothing when present.
set -euo pipefail

if command -v bwrap >/dev/null 2>&1; then
    echo "bubblewrap present: $(bwrap --version)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "bubblewrap missing and apt-get unavailable: install 'bubblewrap' with your package manager" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends bubblewrap
echo "installed: $(bwrap --version)"
