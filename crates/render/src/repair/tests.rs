use super::*;

#[test]
fn a_well_formed_message_is_not_copied() {
    let raw = b"From: a@example.com\r\nSubject: x\r\n\r\nbody\r\n";
    let repaired = repair(raw);
    assert!(matches!(repaired.bytes, Cow::Borrowed(_)));
    assert!(repaired.repairs.is_empty());
}

#[test]
fn folds_between_and_inside_encoded_words_are_removed() {
    let mut repairs = BTreeSet::new();
    let out = unfold_parameter_values(
        b"Content-Disposition: attachment; filename=\"=?UTF-8?Q?a_?=\r\n =?UTF-8?Q?b?=\"",
        &mut repairs,
    );
    assert_eq!(
        out,
        b"Content-Disposition: attachment; filename=\"=?UTF-8?B?YSBi?=\""
    );
    assert!(repairs.contains(&Repair::FoldedEncodedWord));
}

#[test]
fn an_ordinary_fold_between_parameters_is_kept() {
    let mut repairs = BTreeSet::new();
    let field = b"Content-Type: text/plain;\r\n charset=utf-8";
    assert_eq!(unfold_parameter_values(field, &mut repairs), field);
    assert!(repairs.is_empty());
}
