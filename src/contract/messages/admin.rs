//! Details of an admin operation on counters and numbers (reset, revise, void, manual override, resuming past the
//! witness, the counter browser, the number register, the stats): what it refuses, and the register's words (its
//! headings and the explanation of each sequence, in the caller's language).

crate::details! {
    /// What an admin operation on counters and numbers says: its refusals, and the number register's words.
    pub enum AdminDetail {
        // ---- the request ----
        ReasonRequired => "ต้องระบุเหตุผล", "a reason is required";
        ReasonTooShort { min, count } => "เหตุผลต้องมีอย่างน้อย {min} ตัวอักษร (มี {count} ตัวอักษร)",
            "the reason must have at least {min} characters (it has {count})";
        TextTooLong { max } => "ข้อความยาวเกิน {max} ตัวอักษร", "the text is longer than {max} characters";
        DocumentIdLength { max } => "รหัสเอกสารต้องมี 1–{max} ตัวอักษร", "the document id must have 1–{max} characters";
        DocumentNumberRequired => "ต้องระบุเลขที่เอกสาร (documentNumber)", "the document number (documentNumber) is required";
        DocumentNumberTooLong { max } => "เลขที่เอกสารยาวเกิน {max} ตัวอักษร", "the document number is longer than {max} characters";
        NewValueNegative => "ค่าใหม่ของตัวนับต้องไม่ติดลบ", "the counter's new value must not be negative";
        AfterSequenceNegative => "afterSequence ต้องไม่ติดลบ", "afterSequence must not be negative";
        /// A manual override names either a legacy number or a value, and a document id only with the number.
        OverrideNumberOrValue => "ระบุอย่างใดอย่างหนึ่ง: เลขที่เอกสาร (documentNumber) หรือค่าตัวนับ (value); \
            รหัสเอกสาร (documentId) ใช้กับเลขที่เอกสารเท่านั้น",
            "give one of the two: a document number (documentNumber) or a counter value (value); \
            a document id (documentId) goes only with a document number";

        // ---- what was not found ----
        CounterNotFound { id } => "ตัวนับเลขที่ {id}", "counter {id}";
        NumberNotFound { number } => "เลขที่เอกสาร {number}", "document number {number}";
        /// A counter that is not numbered under the configuration named with it.
        CounterOfConfig { counter, config } => "ตัวนับ {counter} ของการตั้งค่า {config}", "counter {counter} of configuration {config}";

        // ---- manual override ----
        /// A value below zero: the range it must be in.
        ValueOutOfRange { max } => "ค่าตัวนับต้องอยู่ระหว่าง 0 ถึง {max}", "the counter value must be between 0 and {max}";
        /// A value beyond what the counter's template can number.
        ValueAboveMax { max } => "ค่าตัวนับต้องอยู่ระหว่าง 0 ถึง {max} (เลขสูงสุดที่รูปแบบเลขที่รองรับ)",
            "the counter value must be between 0 and {max} (the highest number the format can hold)";
        /// A legacy number that does not read with the template (`{template}`: the template's text).
        NumberNotInTemplate { number, template } => "เลขที่ '{number}' ไม่ตรงกับรูปแบบ {template}",
            "number '{number}' does not match the format {template}";
        /// A legacy number whose parts or period are not the chosen counter's; `{part}` is one of the `Part…` words.
        NotThisCounter { part } => "เลขที่นี้ไม่ใช่ของตัวนับที่เลือก ({part} ไม่ตรงกัน)",
            "this number does not belong to the chosen counter ({part} differs)";
        PartOriginator => "หน่วยงานผู้ส่ง", "originator";
        PartRecipient => "หน่วยงานผู้รับ", "recipient";
        PartSubType => "ประเภทย่อย", "sub-type";
        PartRfaType => "ประเภท RFA", "RFA type";
        PartDiscipline => "สาขางาน", "discipline";
        PartCorrespondenceType => "ประเภทเอกสาร", "correspondence type";
        PartPeriod => "ปี/เดือน หรือรอบการนับ", "year/month or counting period";

        // ---- resume past the witness ----
        NotBehindWitness { counter } => "ตัวนับ {counter} ไม่ได้ย้อนหลังบันทึกยืนยัน ออกเลขได้ตามปกติ",
            "counter {counter} is not behind its witness; it issues numbers as usual";

        // ---- the number register ----
        RegisterFormat { given } => "รูปแบบ '{given}' ไม่รองรับ (csv หรือ xlsx)", "format '{given}' is not supported (csv or xlsx)";
        RegisterPeriod { given } => "ช่วงเวลา '{given}' ไม่ถูกต้อง (เช่น YEAR_2026, MONTH_2026_01, FY_2570, NONE, CONTRACT_12)",
            "period '{given}' is not valid (e.g. YEAR_2026, MONTH_2026_01, FY_2570, NONE, CONTRACT_12)";
        /// The register workbook's sheet.
        RegisterSheet => "ทะเบียนเลขที่", "number register";
        HeadingPeriod => "ช่วงเวลา (period)", "period";
        HeadingSequence => "ลำดับ", "sequence";
        HeadingNumber => "เลขที่เอกสาร", "document number";
        HeadingStatus => "สถานะ", "status";
        HeadingDocumentId => "รหัสเอกสาร", "document id";
        HeadingWho => "ผู้ดำเนินการ", "by";
        HeadingWhen => "เวลา (กรุงเทพฯ)", "time (Bangkok)";
        HeadingReason => "เหตุผล", "reason";
        HeadingCounter => "ตัวนับ", "counter";
        /// A sequence passed over by a manual override.
        Skipped { who, reason } => "ข้ามโดยการกำหนดค่าตัวนับด้วยตนเอง (manual override) โดย {who}: {reason}",
            "skipped by setting the counter by hand (manual override) by {who}: {reason}";
        /// A sequence given back by an approved reset.
        Released { request, who } => "ปล่อยคืนโดยการรีเซ็ตตัวนับ (คำขอ {request}) โดย {who}",
            "released by a counter reset (request {request}) by {who}";
        /// A sequence taken by a request that then failed (`{error}`: what failed).
        FailedSequence { reason, error } => "ลำดับถูกใช้แต่ไม่ได้ออกเลข: {reason} ({error})",
            "the sequence was taken but no number was issued: {reason} ({error})";
        /// A sequence with no number, its last audit row of another kind.
        NoNumber { operation, status } => "ไม่มีเลขที่ในระบบ; บันทึกล่าสุด: {operation} {status}",
            "no number on record; last audit row: {operation} {status}";
        Unexplained => "ไม่มีคำอธิบาย (ไม่พบบันทึกการตรวจสอบ)", "no explanation (no audit row found)";
        /// A confirmed number registered by hand or by an import.
        Legacy { who, reason } => "นำเข้าเลขที่เดิม (legacy/import) โดย {who}: {reason}", "legacy number imported (legacy/import) by {who}: {reason}";
        /// `{block}`: [`AdminDetail::OfBlock`] or nothing.
        Reserved { block } => "จองไว้ ยังไม่ยืนยัน{block}", "reserved, not confirmed yet{block}";
        /// Appended to a number of a reserved block: whose block.
        OfBlock { holder } => " (ชุดเลขที่ของ {holder})", " (block of {holder})";
        Expired => "หมดเวลาจองโดยไม่ได้ยืนยัน (expired)", "the reservation ran out unconfirmed (expired)";
        BlockExpired { block } => "ชุดเลขที่หมดเวลาถือโดยไม่ได้ยืนยัน (block expired){block}",
            "the block's hold ran out unconfirmed (block expired){block}";
        Cancelled { who, reason } => "ยกเลิกโดย {who}: {reason}", "cancelled by {who}: {reason}";
        /// `{replaced}`: [`AdminDetail::ReplacedBy`] or nothing.
        Voided { who, reason, replaced } => "ยกเลิกเลขที่ (void) โดย {who}: {reason}{replaced}", "number voided (void) by {who}: {reason}{replaced}";
        ReplacedBy { number } => " แทนด้วยเลขที่ {number}", ", replaced by number {number}";
        UnknownStatus { status } => "สถานะไม่รู้จัก {status}", "unknown status {status}";

        // ---- stats ----
        StatsDays { max } => "จำนวนวัน (days) ต้องอยู่ระหว่าง 1 ถึง {max} วัน", "the number of days (days) must be between 1 and {max}";
        StatsLimit { max } => "จำนวนตัวนับ (limit) ต้องอยู่ระหว่าง 1 ถึง {max}", "the number of counters (limit) must be between 1 and {max}";
    }
}
