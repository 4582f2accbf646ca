#!/usr/bin/env bash
# Installs what the engine needs on a Debian machine with Node 20: Debian packages through apt-get
# (never a binary from elsewhere) and the npm packages of package-lock.json.
#   bash scripts/setup.sh          what `npm start` needs (ffmpeg)
#   bash scripts/setup.sh --test   plus what the tests need (chromium, espeak-ng, pocketsphinx; gcc for the C load generator of bench/ssai-capacity)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(ffmpeg)
if [ "${1:-}" = "--test" ]; then
  packages+=(chromium espeak-ng pocketsphinx pocketsphinx-en-us gcc libc6-dev)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || echo "setup: apt-get update failed; trying the install with the cached package lists"
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "setup: missing Debian packages: ${missing[*]}"
    echo "setup: run this, then run this script again:"
    echo "  sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
fi

major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "setup: Node.js 20 or newer is needed (found $(node -v))"
  exit 1
fi

# npm ci only when the installed tree does not match the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
fi
# The web console at /console is built from console/ (Vite); no CDN at run time.
echo "setup: building the console"
npm run build:console --silent
echo "setup: ready"
