//! Details of a request refused before any feature reads it: its body, its path and query, its paging.

crate::details! {
    /// What is wrong with a request as such.
    pub enum RequestDetail {
        NotJson => "ต้องส่งข้อมูลแบบ JSON (Content-Type: application/json)", "send JSON (Content-Type: application/json)";
        Unreadable { reason } => "อ่านข้อมูลที่ส่งมาไม่ได้ ({reason})", "the data sent cannot be read ({reason})";
        MalformedJson { reason } => "รูปแบบ JSON ไม่ถูกต้อง ({reason})", "malformed JSON ({reason})";
        JsonShape { reason } => "ข้อมูลไม่ตรงตามรูปแบบที่กำหนด ({reason})", "the data does not have the expected shape ({reason})";
        PathValue { reason } => "รหัสในที่อยู่ (URL) ไม่ถูกต้อง ({reason})", "a code in the address (URL) is not valid ({reason})";
        QueryValue { reason } => "พารามิเตอร์ในที่อยู่ (URL) ไม่ถูกต้อง ({reason})", "a parameter in the address (URL) is not valid ({reason})";
        /// A post to a plain form whose body is not a form; `reason` is the framework's.
        FormExpected { reason } => "ต้องส่งข้อมูลเป็นแบบฟอร์ม ({reason})", "the data must be sent as a form ({reason})";
        NotUtf8 => "ข้อมูลที่ส่งมาต้องเป็นข้อความ UTF-8", "the data sent must be UTF-8 text";
        ImportRefused { invalid, total } => "นำเข้าไม่สำเร็จ: มีข้อมูลไม่ถูกต้อง {invalid} แถว จาก {total} แถว จึงไม่ได้บันทึกข้อมูลใดเลย",
            "import refused: {invalid} of {total} rows are invalid; nothing was changed";
        NoSuchEndpoint => "ที่อยู่ API นี้", "no such API endpoint";
        PageBeyondLast { max } => "หน้าที่ขอต้องไม่เกิน {max}", "the page asked for may not be beyond {max}";
        UnresolvedError { id } => "ข้อผิดพลาดที่ยังไม่แก้ไขรหัส {id}", "unresolved error {id}";
    }
}
