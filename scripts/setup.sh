#!/usr/bin/env bash
# Installs whatever is missing to build, run and test Countersign, then builds the UI.
#
# Idempotent and non-interactive: run it as often as you like, with or without a TTY.
#  - Debian packages (as root, with apt-get; `apt-get update` only when something is missing),
#  - the UI's npm packages (`npm ci`, only when package-lock.json changed), among them the Tauri
#    CLI (`@tauri-apps/cli`, its prebuilt binary), whose bundler makes the .deb (package.sh),
#  - the UI build in ui/dist (only when its sources changed), which the desktop app embeds.
# Rust (the toolchain in rust-toolchain.toml) and Node.js >= 20.19 come with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# What building the workspace needs (Tauri/WebKitGTK, the tray, OpenSSL, the keyring's D-Bus).
BUILD_PACKAGES=(
  build-essential pkg-config
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev
  libssl-dev libdbus-1-dev libsecret-1-dev
)
# What running the desktop end-to-end suite needs: a virtual display, WebKit's WebDriver,
# a D-Bus session bus and a notification daemon that the app's notifications go to; and
# sqlite3, with which the CLI suite edits the mirror by hand as a tamperer would; and
# gnome-keyring, the real Secret Service the keyring tests keep secrets in.
E2E_PACKAGES=(xvfb xauth webkit2gtk-driver dbus dbus-x11 dunst sqlite3 gnome-keyring)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
for package in "${BUILD_PACKAGES[@]}" "${E2E_PACKAGES[@]}"; do
  installed "$package" || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
  if [[ $(id -u) == 0 ]]; then
    say "installing Debian packages: ${missing[*]}"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "missing Debian packages: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install ${missing[*]}" >&2
    for package in "${missing[@]}"; do
      for needed in "${BUILD_PACKAGES[@]}"; do
        [[ $package == "$needed" ]] && { echo "cannot build without $package" >&2; exit 1; }
      done
    done
    echo "(only the desktop end-to-end tests need these; they will be skipped)" >&2
  fi
else
  say "Debian packages: all present"
fi

if ! command -v cargo >/dev/null; then
  echo "cannot find cargo: install the Rust toolchain named in rust-toolchain.toml" >&2
  exit 1
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "cannot find node and npm: install Node.js 20.19 or newer" >&2
  exit 1
fi
node_version=$(node -p 'process.versions.node')
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=19)?0:1)'; then
  echo "Node.js $node_version is too old: Vite needs 20.19 or newer" >&2
  exit 1
fi

# npm ci only when the lock file changed since the last install (or node_modules is gone).
lock_sum=$(sha256sum ui/package-lock.json | cut -d' ' -f1)
stamp=ui/node_modules/.countersign-lock.sha256
if [[ -f $stamp && $(cat "$stamp") == "$lock_sum" ]]; then
  say "UI packages: up to date"
else
  say "installing UI packages (npm ci)"
  (cd ui && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" >"$stamp"
fi

# Rebuild ui/dist only when a source is newer than the last build: a new dist makes cargo
# re-embed it and relink the app.
if [[ ! -f ui/dist/index.html ]] ||
  [[ -n $(find ui/src ui/index.html ui/vite.config.ts ui/svelte.config.js ui/tsconfig.json \
    ui/package-lock.json -newer ui/dist/index.html -print -quit) ]]; then
  say "building the UI (ui/dist)"
  (cd ui && npm run --silent build -- --logLevel warn)
else
  say "UI build: up to date"
fi
say "setup done"
