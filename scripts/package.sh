#!/usr/bin/env bash
# Builds the Debian package: countersign-desktop (with demo mode) and the countersign CLI in
# /usr/bin, the .desktop entry, the icons in the hicolor theme and the runtime dependencies,
# made by Tauri's bundler (`tauri bundle --bundles deb`; the Tauri CLI is the UI's npm
# devDependency `@tauri-apps/cli`, a prebuilt binary that scripts/setup.sh installs with `npm ci`). One release build: the CLI and the app together, with the features a
# bundled app needs (`demo`, and `tauri/custom-protocol`, which `tauri build` would add:
# `build_options` in tauri-cli's interface/rust.rs), so the dependencies they share are compiled
# once; the bundler then maps the CLI into the package
# (`bundle.linux.deb.files`). Built alone, the CLI unified fewer features (serde_json's, url's)
# and every crate above them was compiled twice. The package is copied to artifacts/countersign_<version>_<arch>.deb
# and its path printed last.
#
# No AppImage: Tauri's AppImage bundler downloads linuxdeploy and its plugins at build time
# (see docs/install.md), and this build downloads nothing.
#
#   bash scripts/package.sh [--build-only]
#
# `--build-only` stops after the release build: scripts/test.sh runs that part early, beside
# its other steps, and this script again at the end, when the build has nothing left to do.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

if [[ ${COUNTERSIGN_SKIP_SETUP:-} != 1 ]]; then
  bash scripts/setup.sh
fi
tauri="$PWD/ui/node_modules/.bin/tauri"
if ! "$tauri" --version >/dev/null 2>&1; then
  echo "cannot find the Tauri CLI at $tauri: run scripts/setup.sh (or npm ci in ui/)" >&2
  exit 1
fi

target_dir=${CARGO_TARGET_DIR:-$PWD/target}
[[ $target_dir == /* ]] || target_dir=$PWD/$target_dir

say "release build of the CLI and the app"
cargo build --release --locked -p countersign-cli -p countersign-desktop \
  --features countersign-desktop/demo,tauri/custom-protocol
if [[ ${1:-} == --build-only ]]; then
  exit 0
fi

cli="$target_dir/release/countersign"
# The CLI's place in the package; the path outside depends on the target dir, so it is given
# here rather than in tauri.conf.json.
config=$(printf '{"bundle":{"linux":{"deb":{"files":{"/usr/bin/countersign":"%s"}}}}}' "$cli")

# `bundle`, not `build`: the binaries are built above. `tauri build` would build the app again,
# and since it hands the merged config to the build in TAURI_CONFIG, which tauri-build's build
# script watches, it recompiled countersign-desktop every time (over a minute).
say "bundling the .deb (tauri bundle --bundles deb)"
rm -rf "$target_dir/release/bundle/deb"
(cd src-tauri && "$tauri" bundle --ci --bundles deb --features demo --config "$config")

shopt -s nullglob
debs=("$target_dir"/release/bundle/deb/*.deb)
if ((${#debs[@]} != 1)); then
  echo "cannot find the one .deb the bundler made in $target_dir/release/bundle/deb" >&2
  exit 1
fi
version=$(dpkg-deb --field "${debs[0]}" Version)
arch=$(dpkg-deb --field "${debs[0]}" Architecture)
mkdir -p artifacts
rm -f artifacts/countersign_*.deb
out="artifacts/countersign_${version}_${arch}.deb"
cp "${debs[0]}" "$out"
say "package: $out"
dpkg-deb --info "$out" | sed -n 's/^ \(Package\|Version\|Depends\|Installed-Size\):/  \1:/p'
echo "$out"
