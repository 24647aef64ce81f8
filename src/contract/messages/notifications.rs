//! Details of webhooks and their deliveries.

crate::details! {
    /// What notifications say of a webhook or a delivery they refuse or cannot find.
    pub enum NotificationDetail {
        Webhook { id } => "เว็บฮุก {id}", "webhook {id}";
        UrlTooLong { max } => "URL ของเว็บฮุกต้องยาวไม่เกิน {max} ตัวอักษร", "the webhook's url must be at most {max} characters long";
        UrlShape => "URL ของเว็บฮุกต้องขึ้นต้นด้วย http:// หรือ https:// และมีชื่อเครื่อง", "url must be http(s)://host…";
        UrlUnparsable => "URL ของเว็บฮุกไม่ถูกต้อง", "the webhook's url is not valid";
        /// `{prefix}`: how a sealed secret starts, which a given one may not.
        SecretShape { min, max, prefix } => "รหัสลับของเว็บฮุกต้องเป็นอักขระ ASCII ที่มองเห็นได้ {min}–{max} ตัว และไม่ขึ้นต้นด้วย {prefix}",
            "the webhook's secret must be {min}–{max} visible ASCII characters, not starting with {prefix}";
        /// `{why}`: the kind of address (loopback, private…), said in English in both languages.
        PrivateTarget { ip, why } => "ปลายทางของเว็บฮุกต้องเป็นที่อยู่สาธารณะ: {ip} เป็นที่อยู่ภายในเครือข่าย ({why}) ซึ่งไม่อนุญาต",
            "webhook target {ip} refused ({why}): it must be a public address, not one inside a network";
        DeliveryStateUnknown { given } => "สถานะการส่งต้องเป็น PENDING, DELIVERED หรือ FAILED ไม่ใช่ '{given}'",
            "the delivery state must be PENDING, DELIVERED or FAILED, not '{given}'";
        Delivery { id } => "การส่งแจ้งเตือน {id}", "notification delivery {id}";
        ReplayNotFailed { state } => "ส่งซ้ำได้เฉพาะการส่งที่ล้มเหลว (สถานะปัจจุบัน {state})",
            "only a failed delivery can be sent again (its state is {state})";
    }
}
