//! A small before/after diff of two template texts for the history panel: display only.
//! Units are whole tokens (`{SEQ:4}`) and single characters of the literal text, compared by the
//! longest common subsequence; within a changed stretch the removed text comes before the added.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Same(String),
    Removed(String),
    Added(String),
}

/// Beyond this many units on a side the texts are shown as one removal and one addition.
const MAX_UNITS: usize = 600;

/// `{…}` groups as one unit each, every other character alone (an unclosed `{` is a character).
fn units(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let len = if c == '{' {
            match rest.find('}') {
                // a `{` inside the group would start the next unit: stop the group before it
                Some(end) if !rest[1..end].contains('{') => end + 1,
                _ => c.len_utf8(),
            }
        } else {
            c.len_utf8()
        };
        out.push(&rest[..len]);
        rest = &rest[len..];
    }
    out
}

pub fn diff(before: &str, after: &str) -> Vec<Part> {
    let a = units(before);
    let b = units(after);
    let mut raw: Vec<Part> = Vec::new();
    if a.len() > MAX_UNITS || b.len() > MAX_UNITS {
        if !before.is_empty() {
            raw.push(Part::Removed(before.to_string()));
        }
        if !after.is_empty() {
            raw.push(Part::Added(after.to_string()));
        }
        return raw;
    }
    let (n, m) = (a.len(), b.len());
    // lcs[i][j] = length of the longest common subsequence of a[i..] and b[j..]
    let mut lcs = vec![vec![0u16; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut removed = String::new();
    let mut added = String::new();
    let mut same = String::new();
    let flush_changes = |raw: &mut Vec<Part>, removed: &mut String, added: &mut String| {
        if !removed.is_empty() {
            raw.push(Part::Removed(std::mem::take(removed)));
        }
        if !added.is_empty() {
            raw.push(Part::Added(std::mem::take(added)));
        }
    };
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            flush_changes(&mut raw, &mut removed, &mut added);
            same.push_str(a[i]);
            i += 1;
            j += 1;
        } else {
            if !same.is_empty() {
                raw.push(Part::Same(std::mem::take(&mut same)));
            }
            if j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1]) {
                removed.push_str(a[i]);
                i += 1;
            } else {
                added.push_str(b[j]);
                j += 1;
            }
        }
    }
    if !same.is_empty() {
        raw.push(Part::Same(same));
    }
    flush_changes(&mut raw, &mut removed, &mut added);
    raw
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(parts: &[Part]) -> String {
        parts
            .iter()
            .map(|p| match p {
                Part::Same(s) => s.clone(),
                Part::Removed(s) => format!("[-{s}]"),
                Part::Added(s) => format!("[+{s}]"),
            })
            .collect()
    }

    #[test]
    fn tokens_are_whole_units() {
        assert_eq!(
            show(&diff("{ORIGINATOR}-{RECIPIENT}-{SEQ:4}-{YEAR:B.E.}", "{ORIGINATOR}-{SEQ:5}-{YEAR:B.E.}")),
            "{ORIGINATOR}-[-{RECIPIENT}-{SEQ:4}][+{SEQ:5}]-{YEAR:B.E.}"
        );
    }

    #[test]
    fn literal_text_by_character() {
        assert_eq!(show(&diff("{ORIGINATOR}-{SEQ:4}", "{ORIGINATOR}/INS/{SEQ:4}")), "{ORIGINATOR}[--][+/INS/]{SEQ:4}");
        assert_eq!(show(&diff("", "{SEQ:4}")), "[+{SEQ:4}]");
        assert_eq!(show(&diff("{SEQ:4}", "{SEQ:4}")), "{SEQ:4}");
        assert_eq!(show(&diff("คคง.", "คคง.-ก")), "คคง.[+-ก]");
    }

    #[test]
    fn unbalanced_braces_do_not_swallow_text() {
        assert_eq!(units("{A{B}"), vec!["{", "A", "{B}"]);
        assert_eq!(units("x{"), vec!["x", "{"]);
    }

    #[test]
    fn joining_gives_back_both_texts() {
        let (a, b) = ("{PROJECT}-{CORR_TYPE}-{DISCIPLINE}-{SEQ:4}-{REV}", "{PROJECT}/{DISCIPLINE}/{RFA_TYPE}/{SEQ:5}");
        let parts = diff(a, b);
        let before: String = parts
            .iter()
            .filter_map(|p| match p {
                Part::Same(s) | Part::Removed(s) => Some(s.as_str()),
                _ => None,
            })
            .collect();
        let after: String = parts
            .iter()
            .filter_map(|p| match p {
                Part::Same(s) | Part::Added(s) => Some(s.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!((before.as_str(), after.as_str()), (a, b));
    }
}
