#!/usr/bin/env bash
# Rebuilds the public corpus (docs/rendering.md, "The public corpus") from local git clones of
# its source repositories, one per directory named owner+name under $MIRRORS (each checked out
# at the commit docs/rendering.md lists). Usage: MIRRORS=/path/to/clones scripts/corpus-build.sh [OUT]
set -euo pipefail
out=${1:-/work/corpus}
take() { # repo-dir name path-regex
  local repo=$1 name=$2 re=$3
  mkdir -p "$out/$name"
  git -C "$repo" ls-tree -r --name-only HEAD | grep -E "$re" | while read -r p; do
    f="$out/$name/$(echo "$p" | tr '/' '_')"
    f="${f%.*}.eml"
    git -C "$repo" cat-file -p "HEAD:$p" > "$f" 2>/dev/null || rm -f "$f"
  done
  echo "$name $(git -C "$repo" rev-parse HEAD) $(ls "$out/$name" | wc -l)"
}
m=${MIRRORS:?set MIRRORS to the folder of clones}
take $m/stalwartlabs+mail-parser mail-parser '^resources/eml/.*\.eml$'
take $m/jstedfast+MimeKit mimekit '^UnitTests/TestData/(messages|smime|dkim|partial)/.*\.(eml|txt|msg)$'
take $m/mikel+mail mikel-mail '^spec/fixtures/emails/.*\.(eml|txt)$|^spec/fixtures/emails/[^.]*$'
take $m/php-mime-mail-parser+php-mime-mail-parser php-mime-mail-parser '^tests/mails/[^/]*$'
take $m/zbateson+mail-mime-parser zbateson '^tests/(_data|.*)/emails/.*\.(eml|txt)$'
take $m/nodemailer+mailparser nodemailer-mailparser '^test/fixtures/.*\.eml$'
# MimeKit's content-length mbox holds 29 whole messages: one file each.
mkdir -p "$out/mimekit-mbox"
git -C $m/jstedfast+MimeKit cat-file -p HEAD:UnitTests/TestData/mbox/content-length.mbox.txt |
  awk -v dir="$out/mimekit-mbox" '/^From /{n++; next} {print > (dir "/msg" n ".eml")}'
echo "mimekit-mbox $(ls "$out/mimekit-mbox" | wc -l)"
take $m/SpamScope+mail-parser spamscope-mail-parser '^tests/mails/[^/]*$'
take $m/mailgun+talon talon '^tests/fixtures/.*\.eml$'
