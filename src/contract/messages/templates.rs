//! Details of a numbering template's save, retire or rollback: its reason, its versions, and a change of the counter
//! key that must be acknowledged. What is wrong in a template's text is said by the rules themselves
//! (`numbering::TemplateError`).

crate::details! {
    /// What a template's save, retire or rollback refuses; and the words that describe a counter key in those sentences.
    pub enum TemplateDetail {
        // the parts a counter key may show besides its project and type
        KeyOriginator => "ผู้ส่ง", "originator";
        KeyRecipient => "ผู้รับ", "recipient";
        KeySubType => "ประเภทย่อย", "sub-type";
        KeyRfaType => "ประเภท RFA", "RFA type";
        KeyDiscipline => "สาขางาน", "discipline";
        /// A counter key: the parts it shows (a list of the words above) and its reset period.
        CounterKey { parts, scope } => "[{parts}] รีเซ็ต {scope}", "[{parts}] reset {scope}";

        KeyChangeOnSave { before, after } =>
            "การเปลี่ยนแปลงนี้เปลี่ยนตัวนับเลขที่จาก {before} เป็น {after}: เลขลำดับจะเริ่มใหม่สำหรับตัวนับใหม่ กรุณายืนยันการเปลี่ยนแปลง",
            "the change moves numbering from counter key {before} to {after}: the running number starts again on the new counter; acknowledge it";
        KeyChangeOnRetire { before, after } =>
            "การเลิกใช้แม่แบบนี้เปลี่ยนตัวนับเลขที่จาก {before} เป็น {after}: เลขลำดับจะเริ่มใหม่สำหรับตัวนับใหม่ กรุณายืนยัน",
            "retiring moves numbering from counter key {before} to {after}: the running number starts again on the new counter; acknowledge it";
        ReasonRequired => "ต้องระบุเหตุผลของการเปลี่ยนแปลง", "a reason for the change is required";
        ReasonTooLong { max } => "เหตุผลยาวเกิน {max} ตัวอักษร", "the reason is longer than {max} characters";
        VersionNotFound { version } => "รุ่นที่ {version} ของแม่แบบนี้", "version {version} of this template";
    }
}
