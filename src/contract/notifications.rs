//! Notifications (docs/rules/api.md#notifications-and-live-screens): the events the service tells of, and what the webhooks' management exchanges.

use crate::numbering::CounterId;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

crate::numbering::ids::id_types! {
    /// A webhook (`notification_webhooks.id`): one receiver of the events.
    WebhookId;
    /// One delivery of one event to one webhook (`notification_deliveries.id`).
    DeliveryId;
}

/// What happened. Stored and sent as its `SCREAMING_SNAKE_CASE` name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum EventKind {
    ResetRequested,
    ResetApproved,
    ResetRejected,
    ResetExecuted,
    NumberConfirmed,
    NumberVoided,
    /// A counter's last number reached 90 % of what its template can number (once per crossing).
    Counter90Percent,
    Counter95Percent,
    /// A batch was refused: the counter's database is behind its witness (docs/rules/numbering.md#what-is-never-done-twice).
    CounterBehindWitness,
    /// A block of contiguous numbers was reserved (`reserve-block`).
    NumberBlockReserved,
}

impl EventKind {
    pub const ALL: [EventKind; 10] = [
        EventKind::ResetRequested,
        EventKind::ResetApproved,
        EventKind::ResetRejected,
        EventKind::ResetExecuted,
        EventKind::NumberConfirmed,
        EventKind::NumberVoided,
        EventKind::Counter90Percent,
        EventKind::Counter95Percent,
        EventKind::CounterBehindWitness,
        EventKind::NumberBlockReserved,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::ResetRequested => "RESET_REQUESTED",
            EventKind::ResetApproved => "RESET_APPROVED",
            EventKind::ResetRejected => "RESET_REJECTED",
            EventKind::ResetExecuted => "RESET_EXECUTED",
            EventKind::NumberConfirmed => "NUMBER_CONFIRMED",
            EventKind::NumberVoided => "NUMBER_VOIDED",
            EventKind::Counter90Percent => "COUNTER_90_PERCENT",
            EventKind::Counter95Percent => "COUNTER_95_PERCENT",
            EventKind::CounterBehindWitness => "COUNTER_BEHIND_WITNESS",
            EventKind::NumberBlockReserved => "NUMBER_BLOCK_RESERVED",
        }
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        let s = s.trim();
        EventKind::ALL.into_iter().find(|k| k.as_str().eq_ignore_ascii_case(s))
    }
}

/// Where a delivery stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum DeliveryState {
    /// Waiting for its (next) attempt.
    Pending,
    Delivered,
    /// Every attempt failed: waits for a super admin's replay.
    Failed,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "PENDING",
            DeliveryState::Delivered => "DELIVERED",
            DeliveryState::Failed => "FAILED",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryState> {
        [DeliveryState::Pending, DeliveryState::Delivered, DeliveryState::Failed].into_iter().find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// The longest webhook URL accepted.
pub const MAX_WEBHOOK_URL_CHARS: usize = 2000;
/// A secret given by the caller: at least this long (a generated one is 64 hex characters)...
pub const MIN_WEBHOOK_SECRET_CHARS: usize = 16;
/// ...and at most this long.
pub const MAX_WEBHOOK_SECRET_CHARS: usize = 200;

/// A new webhook. No kinds: every kind. No secret: one is generated (shown once, in the answer).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewWebhook {
    /// http:// or https://, at most 2000 characters.
    #[cfg_attr(feature = "ssr", schema(schema_with = schema::webhook_url))]
    pub url: String,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(schema_with = schema::webhook_secret))]
    pub secret: Option<String>,
    #[serde(default)]
    pub kinds: Vec<EventKind>,
}

/// A webhook as listed (its secret is never shown again).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct WebhookView {
    pub id: WebhookId,
    pub url: String,
    /// Empty: every kind.
    pub kinds: Vec<EventKind>,
    pub active: bool,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    /// Its deliveries that failed for good (waiting for a replay).
    pub failed: i64,
    pub pending: i64,
}

/// A webhook just created, with its secret: the only time it is shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct WebhookCreated {
    pub webhook: WebhookView,
    pub secret: String,
}

/// `PATCH` a webhook: enable or disable it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct WebhookUpdate {
    pub active: bool,
}

/// One delivery of one event to one webhook.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DeliveryView {
    pub id: DeliveryId,
    pub webhook_id: WebhookId,
    pub webhook_url: String,
    pub event_id: String,
    pub kind: EventKind,
    pub counter_id: Option<CounterId>,
    pub state: DeliveryState,
    pub attempts: i64,
    pub next_attempt_at: DateTime<Utc>,
    /// The receiver's last HTTP status, if it answered.
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub occurred_at: DateTime<Utc>,
}

/// How many deliveries a replay put back in line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Replayed {
    pub replayed: i64,
}

/// What waits for the viewer (the header's badge): reset requests another super admin made, which this one may
/// approve or reject.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Waiting {
    pub reset_requests: i64,
}

/// The OpenAPI schemas of a new webhook's fields: the server's rules (`server::notifications`), in the shared
/// pieces of `lenient::schema`.
#[cfg(feature = "ssr")]
pub mod schema {
    use super::{MAX_WEBHOOK_SECRET_CHARS, MAX_WEBHOOK_URL_CHARS, MIN_WEBHOOK_SECRET_CHARS};
    use crate::contract::lenient::schema::{text, NO_CONTROL, TRIMMED};
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    use utoipa::openapi::{RefOr, Schema};

    /// A webhook's URL: `http://` or `https://` (any case) and no control character, at most 2000 characters. That
    /// the rest reads as a URL with a host (the WHATWG grammar) no pattern states: a 400 the fuzzer is told of.
    pub fn webhook_url() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(format!("^{TRIMMED}*[Hh][Tt][Tt][Pp]([Ss])?://{NO_CONTROL}*$")))
            .max_length(Some(MAX_WEBHOOK_URL_CHARS))
            .description(Some("http:// or https://, then a host; at most 2000 characters"))
            .examples(["https://dms.example.com/hooks/docnum"])
            .into()
    }

    /// A webhook's signing secret, given: 16–200 visible ASCII characters (trimmed); absent, null or blank: one is
    /// generated.
    pub fn webhook_secret() -> RefOr<Schema> {
        let (min, max) = (MIN_WEBHOOK_SECRET_CHARS, MAX_WEBHOOK_SECRET_CHARS);
        text(format!("^{TRIMMED}*([!-~]{{{min},{max}}})?{TRIMMED}*$"), true, "16–200 visible ASCII characters; absent or blank: generated")
    }
}
