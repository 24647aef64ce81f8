//! Revision labels A…Z, AA, AB, … (bijective base 26, like spreadsheet columns).

/// Longest label `parse_rev` accepts; bounds the rendered length of `{REV}`.
pub const MAX_REV_LEN: usize = 3;

/// 0 → "A", 25 → "Z", 26 → "AA", 27 → "AB", …
pub fn rev_label(n: u32) -> String {
    let mut n = u64::from(n) + 1;
    let mut out = Vec::new();
    while n > 0 {
        n -= 1;
        out.push(b'A' + (n % 26) as u8);
        n /= 26;
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII")
}

/// Inverse of [`rev_label`] for labels of 1–3 uppercase letters.
pub fn parse_rev(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > MAX_REV_LEN || !s.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let n = s.bytes().fold(0u32, |acc, b| acc * 26 + u32::from(b - b'A') + 1);
    Some(n - 1)
}

/// The label after `s`; `None` if `s` is not a label or is the last one ("ZZZ").
pub fn next_rev(s: &str) -> Option<String> {
    let next = rev_label(parse_rev(s)? + 1);
    (next.len() <= MAX_REV_LEN).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        let cases = [(0, "A"), (1, "B"), (25, "Z"), (26, "AA"), (27, "AB"), (51, "AZ"), (52, "BA"), (701, "ZZ"), (702, "AAA"), (18277, "ZZZ")];
        for (n, l) in cases {
            assert_eq!(rev_label(n), l);
            assert_eq!(parse_rev(l), Some(n));
        }
        assert_eq!(rev_label(18278), "AAAA");
    }

    #[test]
    fn parse_rejects_non_labels() {
        for s in ["", "a", "A1", "AAAA", "Ä", " A", "-"] {
            assert_eq!(parse_rev(s), None, "{s:?}");
        }
    }

    #[test]
    fn next() {
        assert_eq!(next_rev("A").as_deref(), Some("B"));
        assert_eq!(next_rev("Z").as_deref(), Some("AA"));
        assert_eq!(next_rev("AZ").as_deref(), Some("BA"));
        assert_eq!(next_rev("ZZ").as_deref(), Some("AAA"));
        assert_eq!(next_rev("ZZZ"), None);
        assert_eq!(next_rev("x"), None);
    }

    #[test]
    fn every_label_round_trips() {
        for n in 0..18278 {
            assert_eq!(parse_rev(&rev_label(n)), Some(n));
        }
    }
}
