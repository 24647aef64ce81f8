//! The verify page's links: a receipt carried in the link itself (`/verify?r=<base64url>`), or, when that would
//! make too dense a QR code for paper, the number's coordinates, with which the page fetches the receipt (public).

use base64::prelude::{Engine as _, BASE64_URL_SAFE_NO_PAD};

use crate::contract::forms::percent_encode;

/// The verify page's path.
pub const VERIFY_PATH: &str = "/verify";

/// The longest link a QR code carries as is. 400 bytes of a link make QR version 15 at level M (77 modules a
/// side): a 3 cm stamp still prints modules of ~0.4 mm. A receipt is ~400 bytes at the least (~530 as base64url) and
/// grows with the log's proof and its cosignatures, so it seldom fits; its coordinates always do.
pub const QR_LINK_MAX: usize = 400;

/// A receipt as the `r` parameter.
pub fn to_param(receipt: &str) -> String {
    BASE64_URL_SAFE_NO_PAD.encode(receipt.as_bytes())
}

/// The receipt an `r` parameter carries; None when it is not base64url of UTF-8 (padding tolerated).
pub fn from_param(r: &str) -> Option<String> {
    let bytes = BASE64_URL_SAFE_NO_PAD.decode(r.trim().trim_end_matches('=')).ok()?;
    String::from_utf8(bytes).ok()
}

/// The verify link of a number on the site at `site` (`https://host`, no trailing slash): the receipt itself when
/// the link stays within [`QR_LINK_MAX`], else the number's coordinates (the page then shows the newest entry).
pub fn verify_link(site: &str, receipt: &str, project: &str, type_code: &str, number: &str) -> String {
    let carried = format!("{site}{VERIFY_PATH}?r={}", to_param(receipt));
    if carried.len() <= QR_LINK_MAX {
        return carried;
    }
    lookup_link(site, project, type_code, number)
}

/// The verify link that names the number; the page fetches its receipt.
pub fn lookup_link(site: &str, project: &str, type_code: &str, number: &str) -> String {
    format!("{site}{VERIFY_PATH}?{}", number_query(project, type_code, number))
}

/// The query that names a number, for `/verify` and for the receipt, its QR code and its stamp
/// (`/api/v1/document-numbering/receipts[/qr|/stamp]?…`).
pub fn number_query(project: &str, type_code: &str, number: &str) -> String {
    format!("projectCode={}&correspondenceTypeCode={}&documentNumber={}", percent_encode(project), percent_encode(type_code), percent_encode(number))
}

/// The REST path of a number's receipt (`kind` ""), or of its QR code ("/qr") or stamp ("/stamp").
pub fn receipt_path(kind: &str, project: &str, type_code: &str, number: &str) -> String {
    format!("/api/v1/document-numbering/receipts{kind}?{}", number_query(project, type_code, number))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_goes_through_the_parameter_unchanged() {
        let r = "c2sp.org/tlog-proof@v1\nextra bnVtYmVyIDE=\nindex 0\n\nnumbers.example/log\n1\nAA==\n\n— x y\n";
        let p = to_param(r);
        assert!(p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{p}");
        assert_eq!(from_param(&p).as_deref(), Some(r));
        assert_eq!(from_param(&format!("{p}==")).as_deref(), Some(r));
        assert_eq!(from_param("not base64!"), None);
        assert_eq!(from_param(&BASE64_URL_SAFE_NO_PAD.encode([0xff, 0xfe])), None);
    }

    #[test]
    fn a_short_receipt_rides_in_the_link_a_long_one_is_looked_up() {
        let short = "c2sp.org/tlog-proof@v1\nindex 0\n\n";
        assert_eq!(verify_link("https://d.example", short, "P", "T", "N"), format!("https://d.example/verify?r={}", to_param(short)));
        let long = "x".repeat(QR_LINK_MAX);
        assert_eq!(
            verify_link("https://d.example", &long, "LCBP3", "RFA", "คคง.-0042/2569 A&B"),
            "https://d.example/verify?projectCode=LCBP3&correspondenceTypeCode=RFA&documentNumber=\
             %E0%B8%84%E0%B8%84%E0%B8%87.-0042%2F2569%20A%26B"
        );
    }
}
