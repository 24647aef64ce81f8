//! Details of the transparency log, its receipts and its witness.

crate::details! {
    /// What the transparency log says of a receipt asked for, and what its witness answers a checkpoint it refuses
    /// (the witness answers in both languages: Thai, then the English in parentheses).
    pub enum LogDetail {
        EventUnknown { events } => "event ต้องเป็นหนึ่งใน {events}", "event must be one of {events}";
        /// `{name}`: the query parameter (projectCode, documentNumber…).
        CoordinateLength { name, max } => "{name} ต้องยาว 1–{max} ตัวอักษร", "{name} must be 1–{max} characters long";
        /// A number with no entry in the log (of the event asked for).
        NoEntry { number, project, type_code } => "บันทึกความโปร่งใสของเลขที่ {number} ใน {project}/{type_code}",
            "the transparency log's entry of {number} in {project}/{type_code}";
        /// `{what}`: one of the reasons below.
        MalformedRequest { what } => "คำขอไม่ถูกรูปแบบ ({what})", "the request is malformed: {what}";
        BodyNotUtf8 => "ไม่ใช่ข้อความ UTF-8", "not UTF-8";
        NoBlankLine => "ไม่มีบรรทัดว่างก่อนจุดตรวจ", "no blank line before the checkpoint";
        FirstLineNotOld => "บรรทัดแรกไม่ใช่ `old <size>`", "the first line is not `old <size>`";
        OldSizeNotDecimal => "ขนาดเดิมไม่ใช่เลขฐานสิบ", "the old size is not a decimal number";
        ProofLineNotBase64 => "บรรทัดของหลักฐานไม่ใช่ base64", "a proof line is not base64";
        ProofLineNotHash => "บรรทัดของหลักฐานไม่ใช่ค่าแฮชขนาด 32 ไบต์", "a proof line is not a 32-byte hash";
        TooManyProofLines => "บรรทัดของหลักฐานมากเกินไป", "too many proof lines";
        NotSignedNote => "จุดตรวจไม่ใช่ข้อความที่ลงนาม (signed note)", "the checkpoint is not a signed note";
        NoteNotCheckpoint => "ข้อความที่ลงนามไม่ใช่จุดตรวจ", "the note is not a checkpoint";
        OldSizeBeyondCheckpoint => "ขนาดเดิมมากกว่าขนาดของจุดตรวจ", "the old size is larger than the checkpoint's";
        /// A checkpoint of a log the witness was not set up to witness.
        UnknownLog => "พยานไม่ได้รับรองบันทึกนี้", "unknown log origin";
        NotSignedByLog => "จุดตรวจไม่ได้ลงนามด้วยกุญแจของบันทึก", "the checkpoint is not signed by the log's key";
        /// The consistency proof from the tree the witness cosigned last does not verify.
        InconsistentCheckpoint => "จุดตรวจไม่สอดคล้องกับจุดตรวจที่พยานรับรองไว้", "the consistency proof does not verify";
        StateNotStored => "พยานบันทึกสถานะไม่สำเร็จ", "the witness could not store its state";
    }
}
