#!/usr/bin/env bash
# Figures for the desktop app against its floor (and Thunderbird), no assertions.
#
# Fills a fresh mirror with N drafts (default 10,000) through core's store API
# (tests/src/bin/fill-mirror.rs), then measures, alternating, RUNS times each
# (tests/src/bin/measure-desktop.rs, through WebDriver, under Xvfb when there is no display):
#   - the minimal window: the same binary with `--blank-window` (one static page);
#   - the app on an empty mirror;
#   - the app on the N-draft mirror;
#   - with --with-thunderbird (when `thunderbird` is installed): Thunderbird on a throw-away
#     profile whose Local Folders inbox is an mbox of N messages written here.
# Each: process start to first paint, and 5 s later the RSS and PSS summed over the process and
# every process under it (WebKit's, Thunderbird's content processes). Prints medians, the
# ratios and the goals of issue 16 as PASS/MISS lines.
#
# Usage: bash scripts/measure-desktop.sh [--with-thunderbird] [--runs RUNS] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

count=10000
runs=3
with_thunderbird=false
while [[ $# -gt 0 ]]; do
  case $1 in
    --with-thunderbird) with_thunderbird=true ;;
    --runs) runs=$2; shift ;;
    *) count=$1 ;;
  esac
  shift
done

# The UI is embedded in the app at compile time: build it first, then the binaries (with the
# demo feature, as the desktop suite runs it; debug, as the suite does).
(cd ui && npm run --silent build >/dev/null)
cargo build --quiet -p countersign-desktop --features demo
cargo build --quiet -p countersign-e2e --bin fill-mirror --bin measure-desktop

dir=$(mktemp -d -t countersign-measure-XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/empty" "$dir/full"
started=$SECONDS
target/debug/fill-mirror "$dir/full" "$count"
echo "filled in $((SECONDS - started)) s"

measure=(target/debug/measure-desktop --empty "$dir/empty" --full "$dir/full" --runs "$runs")

if $with_thunderbird; then
  if command -v thunderbird >/dev/null && command -v xwd >/dev/null; then
    # xwd reads the screen (Debian x11-apps); xdotool (optional) quits the first start cleanly.
    profile="$dir/thunderbird"
    write_thunderbird_profile() {
      local mail="$profile/Mail/Local Folders"
      mkdir -p "$mail"
      # Local Folders only, no mail account, nothing that talks to the network or asks
      # anything at start; the Inbox selected, in a 1200×800 window as the app's.
      cat >"$profile/user.js" <<'EOF'
user_pref("mail.accountmanager.accounts", "account1");
user_pref("mail.accountmanager.localfoldersserver", "server1");
user_pref("mail.account.account1.server", "server1");
user_pref("mail.server.server1.type", "none");
user_pref("mail.server.server1.hostname", "Local Folders");
user_pref("mail.server.server1.name", "Local Folders");
user_pref("mail.server.server1.userName", "nobody");
user_pref("mail.server.server1.directory-rel", "[ProfD]Mail/Local Folders");
user_pref("mail.provider.enabled", false);
user_pref("mail.shell.checkDefaultClient", false);
user_pref("mailnews.start_page.enabled", false);
user_pref("mail.rights.version", 1);
user_pref("mail.spotlight.firstRunDone", true);
user_pref("mail.winsearch.firstRunDone", true);
user_pref("mail.accounthub.enabled", false);
user_pref("mail.account_setup.open_on_startup", false);
user_pref("app.update.enabled", false);
user_pref("app.update.auto", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("browser.aboutConfig.showWarning", false);
user_pref("extensions.update.enabled", false);
user_pref("mail.startup.enabledMailCheckOnce", true);
user_pref("mail.tabs.loadInBackground", true);
EOF
      cat >"$profile/xulstore.json" <<'EOF'
{"chrome://messenger/content/messenger.xhtml":{"messengerWindow":{"width":"1200","height":"800","screenX":"0","screenY":"0","sizemode":"normal"}}}
EOF
      # The one tab shows the Inbox (what Thunderbird writes itself on quitting there).
      cat >"$profile/session.json" <<'EOF'
{"rev":0,"windows":[{"type":"3pane","tabs":{"rev":0,"selectedIndex":0,"tabs":[{"mode":"mail3PaneTab","state":{"firstTab":true,"folderPaneVisible":true,"folderURI":"mailbox://nobody@Local%20Folders/Inbox","messagePaneVisible":true},"ext":{}}]}}]}
EOF
      echo '{"open":{"all":["mailbox://nobody@Local%20Folders"]}}' >"$profile/folderTree.json"
      # The mbox: N messages like the drafts (a sender, a subject, two lines), "From " lines
      # separating them.
      awk -v n="$count" 'BEGIN {
        for (i = 0; i < n; i++) {
          printf "From agent@example.com Tue Dec  1 12:00:00 2026\n";
          printf "From: bulk@example.com\nTo: client%d@example.com\n", i;
          printf "Subject: Re: Order %d\nDate: Tue, 01 Dec 2026 12:00:00 +0000\n", i;
          printf "Message-ID: <bulk-%d@agent.example>\n\nYour order %d ships today.\n\n", i, i;
        }
      }' >"$mail/Inbox"
      : >"$mail/Trash"
    }
    write_thunderbird_profile
    # A first start builds the folder's index (Inbox.msf) and lets Thunderbird finish its
    # first-run work; the measured starts copy the profile as it was left.
    echo "preparing the Thunderbird profile (a first start indexes the mbox) …"
    cat >"$dir/first-start.sh" <<'EOF'
profile=$1
thunderbird --no-remote --profile "$profile" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 120); do
  [[ -s "$profile/Mail/Local Folders/Inbox.msf" ]] && break
  sleep 1
done
sleep 5
# A clean quit writes the index and the session; a kill only if that did not end it.
command -v xdotool >/dev/null && xdotool key ctrl+q
for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
EOF
    if [[ -z ${DISPLAY:-} ]]; then
      xvfb-run -a -s "-screen 0 1280x800x24" bash "$dir/first-start.sh" "$profile"
    else
      bash "$dir/first-start.sh" "$profile"
    fi
    ls "$profile/Mail/Local Folders/Inbox.msf" >/dev/null
    measure+=(--thunderbird "$profile")
  else
    echo "Thunderbird not measured: \`thunderbird\` (and \`xwd\`, Debian x11-apps) must be installed"
  fi
fi

# The measuring binary sits beside the app, not in deps/ as the test binaries do.
export COUNTERSIGN_DESKTOP_BIN=${COUNTERSIGN_DESKTOP_BIN:-$PWD/target/debug/countersign-desktop}
if [[ -z ${DISPLAY:-} ]]; then
  measure=(xvfb-run -a -s "-screen 0 1280x800x24" "${measure[@]}")
fi
"${measure[@]}"
