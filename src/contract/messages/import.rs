//! Details of a bulk import of counters and legacy numbers: what is wrong with its text (JSON or CSV) or with a row,
//! and the reason it records when the caller gives none.

crate::details! {
    /// What a bulk import says: its refusals of the text and of rows, and its default reason.
    pub enum ImportDetail {
        /// The reason recorded in the audit rows of an import that was given none.
        DefaultReason => "นำเข้าข้อมูลเลขที่เอกสารและตัวนับ (bulk import)", "import of document numbers and counters (bulk import)";

        // ---- the text ----
        /// `{reason}`: the JSON parser's words.
        MalformedJson { line, column, reason } => "รูปแบบ JSON ไม่ถูกต้อง (บรรทัด {line} ตำแหน่ง {column}: {reason})",
            "malformed JSON (line {line}, column {column}: {reason})";
        JsonShape => "JSON ต้องเป็นรายการแถว [...] หรือ {\"reason\": \"…\", \"rows\": [...]}",
            "the JSON must be a list of rows [...] or {\"reason\": \"…\", \"rows\": [...]}";
        UnknownJsonKey { key } => "ไม่รู้จักช่อง '{key}' ในเอกสาร JSON", "unknown key '{key}' in the JSON document";
        /// A JSON row that is not a row (`{reason}`: the parser's words).
        JsonRowShape { row, reason } => "แถวที่ {row}: ข้อมูลไม่ตรงตามรูปแบบ ({reason})",
            "row {row}: the data does not have the expected shape ({reason})";
        // the English of the CSV refusals keeps its "CSV header: " / "CSV: " / "unknown CSV column " openings, which
        // scripts/fuzz_checks.py expects of an import refused for its CSV table
        CsvHeaderUnreadable { reason } => "อ่านหัวตาราง CSV ไม่ได้ ({reason})", "CSV header: cannot be read ({reason})";
        CsvHeaderMissing => "ไฟล์ CSV ต้องมีหัวตาราง (บรรทัดแรก) เช่น projectCode,correspondenceTypeCode,documentNumber",
            "CSV header: the file must have one (the first line), e.g. projectCode,correspondenceTypeCode,documentNumber";
        /// `{allowed}`: the column names, comma-separated.
        CsvUnknownColumn { column, allowed } => "ไม่รู้จักคอลัมน์ '{column}' ในไฟล์ CSV (ใช้ได้: {allowed})",
            "unknown CSV column '{column}' (allowed: {allowed})";
        CsvRowUnreadable { reason } => "อ่านแถว CSV นี้ไม่ได้ ({reason})", "CSV: this row cannot be read ({reason})";
        CsvRowTooWide { fields, header } => "แถวนี้มี {fields} ช่อง มากกว่าหัวตาราง ({header} ช่อง)",
            "this row has {fields} fields, more than the header ({header} fields)";
        CsvRowShape { reason } => "ข้อมูลในแถวไม่ตรงตามรูปแบบ ({reason})", "the row's data does not have the expected shape ({reason})";
        TooManyRows { max } => "นำเข้าได้ครั้งละไม่เกิน {max} แถว", "at most {max} rows per import";
        NoRows => "ไม่มีแถวข้อมูลให้นำเข้า", "no rows to import";
        /// The numbers all rows pass over together are more than one import may record.
        TooManySkipped { max } => "การนำเข้านี้ข้ามเลขรวมเกิน {max} เลข (แต่ละเลขที่ข้ามต้องมีบันทึกการตรวจสอบ) กรุณาแบ่งนำเข้าเป็นหลายครั้ง",
            "this import passes over more than {max} numbers in total (each number passed over needs an audit row); \
            please split it into several imports";

        // ---- a row ----
        /// `{field}`: one of the `Field…` words.
        Required { field } => "ต้องระบุ{field}", "{field} is required";
        FieldProjectCode => "รหัสโครงการ (projectCode)", "the project code (projectCode)";
        FieldCorrespondenceTypeCode => "รหัสประเภทเอกสาร (correspondenceTypeCode)", "the correspondence type code (correspondenceTypeCode)";
        NumberOrValue => "แต่ละแถวต้องระบุอย่างใดอย่างหนึ่ง: เลขที่เอกสาร (documentNumber) หรือค่าตัวนับ (value)",
            "each row must give one of the two: a document number (documentNumber) or a counter value (value)";
        ValueNotCount { given } => "ค่าตัวนับ (value) ต้องเป็นจำนวนเต็มไม่ติดลบ ไม่ใช่ '{given}'",
            "the counter value (value) must be a whole number of 0 or more, not '{given}'";
        DocumentIdWithValue => "documentId ใช้กับแถวเลขที่เอกสารเท่านั้น", "documentId goes only with a row of a document number";
        BadYear { given } => "ปี '{given}' ไม่ถูกต้อง (ใช้ พ.ศ. หรือ ค.ศ.)", "year '{given}' is not valid (use B.E. or A.D.)";
        BadMonth { given } => "เดือน '{given}' ไม่ถูกต้อง (1–12)", "month '{given}' is not valid (1–12)";
        BadYearMonth => "ปี/เดือนไม่ถูกต้อง", "the year/month is not valid";
    }
}
