#!/usr/bin/env python3
"""Hand-made mutants of the send path's guards and binding and of the rules' guards.

Run on demand, not in CI (each mutant rebuilds and runs the tests that should catch it; all
of them take about half an hour on two cores):

    python3 scripts/mutants.py            # every mutant
    python3 scripts/mutants.py binding    # those whose name contains "binding"
    python3 scripts/mutants.py --list

Each mutant breaks one promise in the product's source — the version an approval binds to,
a check the owner must confirm, a guard no rule may lift — then runs the tests named for it.
A mutant those tests do not fail on SURVIVES: a promise without a test that holds it. The
script restores every file it changed (also on Ctrl-C) and refuses to start on a file with
uncommitted changes. It prints one line per mutant and a summary, and exits 1 if any
survived. Why hand-made rather than `cargo mutants`: the suites that prove these promises are
integration tests over real SQLite files and loopback fakes (minutes each), so every mutant
runs only the tests aimed at it; cargo-mutants would run the whole crate's suite per mutant
(days here), and it is not installed on a fresh machine.
"""

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CORE = ["-p", "countersign-core", "--test", "integration"]
CLI = ["-p", "countersign-cli", "--test", "cli"]
LIB = ["-p", "countersign-core", "--lib"]

# (name, file, the exact text to replace (once in the file), its replacement, cargo test args)
MUTANTS = [
    # --- the binding: what is decided is the version the owner saw ---------------------------
    (
        "binding: the store queues a decision on a version other than the one shown",
        "crates/core/src/store/decisions/enqueue.rs",
        "if current_version != new.version || digest.as_deref() != Some(new.digest.as_str()) {",
        "if false {",
        CORE + ["binding", "store::"],
    ),
    # Not a mutant here: decide's own early "changed since it was shown" check (decide.rs,
    # `enqueue`). The store makes the same check in the transaction that writes the decision,
    # with the same error, so removing the early one changes nothing anybody can observe.
    (
        "binding: a version never displayed can be approved",
        "crates/core/src/store/views.rs",
        "    id.ok_or_else(|| Error::NotShown {",
        "    Some(id.unwrap_or(0)).ok_or_else(|| Error::NotShown {",
        CORE + ["shown"],
    ),
    (
        "binding: the dispatcher sends although the agent changed the draft after approval",
        "crates/core/src/outbox/gmail.rs",
        "        if message_id == self.decision.version {",
        "        if !message_id.is_empty() {",
        CORE + ["outbox"],
    ),
    (
        "binding: muster is told to decide a draft whose version changed",
        "crates/core/src/outbox/muster.rs",
        "None if draft.updated_at == decision.version => {",
        "None if !draft.updated_at.is_empty() => {",
        CORE + ["muster_truth::a_decide_that_did_not_land"],
    ),
    (
        "binding: the dispatcher sends bytes changed in the file beside an unchanged digest",
        "crates/core/src/outbox/gmail.rs",
        "        if hex::encode(Sha256::digest(bytes)) != self.decision.digest\n            || version.sha256 != self.decision.digest\n        {",
        "        if version.sha256 != self.decision.digest {",
        CORE + ["outbox::bytes_changed"],
    ),
    (
        "record: the dispatcher sends a decision the sealed record does not vouch for",
        "crates/core/src/store/decisions/claim.rs",
        "        if let Some(why) = unsendable {",
        "        if let Some(why) = unsendable.filter(|_| false) {",
        CLI + ["sealed"],
    ),
    # --- what the owner must confirm ----------------------------------------------------------
    (
        "confirm: a draft with cautions is approved without 'Approve anyway?'",
        "crates/core/src/decide.rs",
        "            if confirmation == Confirmation::None && !found.is_empty() {",
        "            if confirmation == Confirmation::None && found.is_empty() && found.len() > 1 {",
        CORE + ["shown"],
    ),
    (
        "confirm: a bulk approval confirms cautions on the owner's behalf",
        "crates/core/src/decide.rs",
        "let result = approve(store, &shown, window, actor, Confirmation::None).await;",
        "let result = approve(store, &shown, window, actor, Confirmation::DespiteCautions).await;",
        CORE + ["bulk"],
    ),
    (
        "state: an item that cannot be decided (sent, rejected) is decided again",
        "crates/core/src/store/decisions/enqueue.rs",
        "            .check_decidable(new.kind)\n            .map_err(|why| Error::refused(&action, why))?;",
        "            .check_decidable(new.kind)\n            .map_err(|why| Error::refused(&action, why))\n            .ok();",
        CORE + ["actions", "store", "outbox"],
    ),
    # --- rules: guards no rule may lift, and the owner's word over a rule's -----------------
    (
        "rules: an Undo (or rejection) of a version does not stop a rule deciding it again",
        "crates/core/src/store/decisions/enqueue.rs",
        "        if by_rule && vetoed_in(&mut tx, new.item_id, &new.version).await? {",
        "        if by_rule && vetoed_in(&mut tx, new.item_id, &new.version).await? && !by_rule {",
        CORE + ["rules"],
    ),
    (
        "rules: an armed rule that is edited keeps deciding (not back in shadow)",
        "crates/core/src/store/rules.rs",
        "UPDATE rules SET version = ?, definition = ?, mode = 'shadow', updated_at = ?",
        "UPDATE rules SET version = ?, definition = ?, updated_at = ?",
        CORE + ["rules::"],
    ),
    (
        "rules: a safety flag does not hold a draft from an armed rule",
        "crates/core/src/rules/guard.rs",
        "        reasons.push(flag.explanation.clone());",
        "        let _ = flag;",
        CORE + ["rules"],
    ),
    (
        "rules: a structural warning does not hold a draft from an armed rule",
        "crates/core/src/rules/guard.rs",
        '        reasons.push(format!("the message has a problem: {}", warning.message));',
        "        let _ = warning;",
        CORE + ["rules"],
    ),
    (
        "rules: a draft still being written is decided at once",
        "crates/core/src/rules/guard.rs",
        "    if settles_at > context.now {",
        "    if settles_at > context.now + chrono::Duration::days(1) {",
        CORE + ["rules"],
    ),
    (
        "rules: the daily cap is never reached",
        "crates/core/src/rules/guard.rs",
        "        if context.decided_today >= cap {",
        "        if context.decided_today > cap {",
        CORE + ["rules"],
    ),
    (
        "rules: Hold everything does not hold",
        "crates/core/src/rules/guard.rs",
        "    if context.hold_everything {",
        "    if context.hold_everything && context.settle_secs == u32::MAX {",
        CORE + ["rules"],
    ),
    (
        "rules: a failed sync does not hold",
        "crates/core/src/rules/guard.rs",
        "    if let Some(error) = &context.last_sync_error {",
        "    if let Some(error) = context.last_sync_error.as_ref().filter(|_| false) {",
        CORE + ["rules"],
    ),
    (
        "rules: a rule scoped to one account decides another account's drafts",
        "crates/core/src/rules/mod.rs",
        "        if account != draft.account_id {",
        "        if account.is_empty() {",
        LIB + ["rules::"],
    ),
    (
        "rules: a label-scoped rule decides drafts without the label",
        "crates/core/src/rules/mod.rs",
        "        if draft.source != Source::Gmail || !draft.labels.contains(label) {",
        "        if draft.source != Source::Gmail {",
        CORE + ["rules"],
    ),
    (
        "rules: a rule limited to Cc-less drafts decides one with a Cc",
        "crates/core/src/rules/mod.rs",
        "    if conditions.no_cc_or_bcc && !(view.cc.is_empty() && view.bcc.is_empty()) {",
        "    if conditions.no_cc_or_bcc && !(view.cc.is_empty() || view.bcc.is_empty()) {",
        LIB + ["rules::"],
    ),
]


def run(args, log):
    """Runs `cargo test` with `args` (the filters after the first `--test` name go before
    `--`); returns the exit code, writing the output to `log`."""
    cargo = ["cargo", "test", "--locked", "-q"]
    # Filters: every word after the test target name.
    split = args.index("--test") + 2 if "--test" in args else len(args)
    target, filters = args[:split], args[split:]
    with open(log, "w") as out:
        if not filters:
            return subprocess.call(cargo + target, cwd=ROOT, stdout=out, stderr=out)
        code = 0
        for f in filters:
            code |= subprocess.call(cargo + target + [f], cwd=ROOT, stdout=out, stderr=out)
        return code


def main():
    wanted = [a for a in sys.argv[1:] if not a.startswith("--")]
    chosen = [m for m in MUTANTS if not wanted or any(w in m[0] for w in wanted)]
    if "--list" in sys.argv:
        for m in chosen:
            print(m[0])
        return 0
    files = sorted({m[1] for m in chosen})
    dirty = subprocess.run(
        ["git", "diff", "--quiet", "--", *files], cwd=ROOT
    ).returncode
    if dirty:
        print("cannot mutate files with uncommitted changes: commit or stash them first")
        return 2
    logs = ROOT / "target" / "mutants"
    logs.mkdir(parents=True, exist_ok=True)
    survived, invalid = [], []
    for n, (name, file, old, new, tests) in enumerate(chosen, 1):
        path = ROOT / file
        original = path.read_text()
        if original.count(old) != 1:
            print(f"[{n}/{len(chosen)}] INVALID  {name}: the text to mutate is not once in {file}")
            invalid.append(name)
            continue
        log = logs / f"{n:02}.log"
        start = time.monotonic()
        try:
            path.write_text(original.replace(old, new))
            code = run(tests, log)
        finally:
            path.write_text(original)
        took = time.monotonic() - start
        text = log.read_text(errors="replace")
        if code == 0:
            verdict = "SURVIVED"
            survived.append(name)
        elif "error[E" in text or "could not compile" in text:
            verdict = "INVALID "
            invalid.append(name)
        else:
            verdict = "killed  "
        print(f"[{n}/{len(chosen)}] {verdict} {name} ({took:.0f} s; {log.relative_to(ROOT)})", flush=True)
    print(
        f"\n{len(chosen)} mutants: {len(chosen) - len(survived) - len(invalid)} killed, "
        f"{len(survived)} survived, {len(invalid)} did not apply or compile"
    )
    for name in survived:
        print(f"  SURVIVED: {name}")
    for name in invalid:
        print(f"  INVALID:  {name}")
    return 1 if survived or invalid else 0


if __name__ == "__main__":
    sys.exit(main())
