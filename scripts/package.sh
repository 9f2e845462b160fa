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
#   bash scripts/package.sh [--build-only | --tested]
#
# `--build-only` stops after the release build. `--tested` builds nothing: it packs the debug
# binaries the test build made (`target/debug/countersign` and `countersign-desktop`, with
# `demo`), the very ones the suite just ran, into a .deb of the same layout. scripts/test.sh
# uses it so that CI checks the package (its files, its dependencies, `apt-get install`, the
# installed app starting) without compiling the whole dependency tree a second time in the
# release profile, which took as long as everything else in a CI run together. The package
# for people is the release one: this script without `--tested`.
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

profile=release
bundle_flags=()
if [[ ${1:-} == --tested ]]; then
  profile=debug
  bundle_flags=(--debug)
  for bin in countersign countersign-desktop; do
    if [[ ! -x $target_dir/debug/$bin ]]; then
      echo "cannot find $target_dir/debug/$bin: run the test build first (scripts/test.sh)" >&2
      exit 1
    fi
  done
else
  say "release build of the CLI and the app"
  cargo build --release --locked -p countersign-cli -p countersign-desktop \
    --features countersign-desktop/demo,tauri/custom-protocol
  if [[ ${1:-} == --build-only ]]; then
    exit 0
  fi
fi

cli="$target_dir/$profile/countersign"
# The CLI's place in the package; the path outside depends on the target dir, so it is given
# here rather than in tauri.conf.json.
config=$(printf '{"bundle":{"linux":{"deb":{"files":{"/usr/bin/countersign":"%s"}}}}}' "$cli")

# `bundle`, not `build`: the binaries are built above. `tauri build` would build the app again,
# and since it hands the merged config to the build in TAURI_CONFIG, which tauri-build's build
# script watches, it recompiled countersign-desktop every time (over a minute).
say "bundling the .deb from the $profile build (tauri bundle --bundles deb)"
rm -rf "$target_dir/$profile/bundle/deb"
(cd src-tauri && "$tauri" bundle --ci "${bundle_flags[@]}" --bundles deb --features demo --config "$config")

shopt -s nullglob
debs=("$target_dir"/$profile/bundle/deb/*.deb)
if ((${#debs[@]} != 1)); then
  echo "cannot find the one .deb the bundler made in $target_dir/$profile/bundle/deb" >&2
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
