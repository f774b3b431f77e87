#!/usr/bin/env bash
# Install the system packages the project needs: bubblewrap (arena sandbox) and chromium (the report's
# headless-browser test). Idempotent: installs only what is missing.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -eq 0 ]; then
    echo "system deps present: $(bwrap --version), $(chromium --version 2>/dev/null | head -n1)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing ${missing[*]} and apt-get unavailable: install them with your package manager" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "installed: ${missing[*]}"
