#!/usr/bin/env bash
# Regenerates the PNG icons in icons/ with ImageMagick. The PNGs are committed, so neither the
# build nor CI needs ImageMagick; run this only after changing the artwork below.
#
# App icon: a green rounded square with a white check mark ("countersigned").
# Tray variants share the check mark so the tray reads as the same app:
#   idle    - grey, nothing to review
#   pending - green with a blue badge, drafts are waiting for review
#   alert   - green with a red badge, something was refused and needs the owner
set -euo pipefail
cd "$(dirname "$0")/../icons"

# Draws the base artwork at 256x256; every size is a resize of it so the icons stay alike.
base() { # $1 = fill colour, $2 = output
  convert -size 256x256 xc:none \
    -fill "$1" -draw 'roundrectangle 12,12 244,244 48,48' \
    -fill none -stroke white -strokewidth 28 \
    -draw 'stroke-linecap round stroke-linejoin round polyline 68,134 110,176 190,88' \
    "PNG32:$2"
}

badge() { # $1 = input, $2 = badge colour, $3 = output
  convert "$1" \
    -fill "$2" -stroke white -strokewidth 10 -draw 'circle 200,56 200,10' \
    "PNG32:$3"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base '#2f6f4f' "$tmp/app.png"
base '#7a7f85' "$tmp/idle.png"
badge "$tmp/app.png" '#2563eb' "$tmp/pending.png"
badge "$tmp/app.png" '#dc2626' "$tmp/alert.png"

# Tauri wants RGBA PNGs (PNG32) or it refuses the icon at compile time.
convert "$tmp/app.png" -resize 32x32 PNG32:32x32.png
convert "$tmp/app.png" -resize 128x128 PNG32:128x128.png
cp "$tmp/app.png" 128x128@2x.png
cp "$tmp/app.png" icon.png
for variant in idle pending alert; do
  convert "$tmp/$variant.png" -resize 64x64 "PNG32:tray-$variant.png"
done
echo "icons written to $(pwd)"
