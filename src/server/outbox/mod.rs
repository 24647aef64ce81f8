//! The notifications' outbox (docs/rules/api.md#notifications-and-live-screens): one row per event, appended in the transaction of
//! the change it tells of — so an event exists exactly when its change committed, and a change rolled back leaves
//! none. Storage level like `audit`: plain values in, no caller, so the engine's batch, the workflow's transitions
//! and the admin writes all append inside their own transactions. Fanning events out to webhooks and delivering
//! them is `notifications`' (above the engine).

use serde_json::Value;

pub(crate) use crate::contract::notifications::EventKind;
use crate::contract::{CounterId, ProjectId};
use crate::server::db::{Conn, Db};

/// One event as its emitter knows it; its id (a UUID) is given when it is appended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Event {
    pub(crate) kind: EventKind,
    /// The counter it is about: events of one counter are delivered in the order they were appended.
    pub(crate) counter_id: Option<CounterId>,
    pub(crate) project_id: Option<ProjectId>,
    /// The event's own fields, sent beside `eventId`, `kind` and `occurredAt`.
    pub(crate) data: Value,
}

impl Event {
    pub(crate) fn about_counter(kind: EventKind, counter_id: CounterId, data: Value) -> Event {
        Event { kind, counter_id: Some(counter_id), project_id: None, data }
    }

    pub(crate) fn in_project(self, project_id: ProjectId) -> Event {
        Event { project_id: Some(project_id), ..self }
    }
}

/// The percentages of a counter's range whose crossing is an event (the alerts (docs/operations/README.md#metrics-and-alerts), told to people too).
pub(crate) const THRESHOLDS: [(u8, EventKind); 2] = [(90, EventKind::Counter90Percent), (95, EventKind::Counter95Percent)];

/// The thresholds a counter passes when its last number moves from `before` to `after` out of `max`: each once per
/// crossing (a reset that lowers the counter lets it cross again).
pub(crate) fn crossed(before: i64, after: i64, max: i64) -> impl Iterator<Item = (u8, EventKind)> {
    let reached = move |n: i64, pct: u8| max > 0 && i128::from(n) * 100 >= i128::from(max) * i128::from(pct);
    THRESHOLDS.into_iter().filter(move |&(pct, _)| !reached(before, pct) && reached(after, pct))
}

/// Appends `events` inside the caller's transaction, in order (their ids are the order of delivery per counter):
/// one statement per 500 events. Nothing when there are none.
pub(crate) async fn append(tx: &mut Conn, events: &[Event], now: i64) -> Result<(), sqlx::Error> {
    const ROWS: usize = 500;
    for chunk in events.chunks(ROWS) {
        let sql = format!(
            "INSERT INTO notification_outbox (event_id, kind, counter_id, project_id, payload, created_at) VALUES {}",
            Db::row_placeholders(chunk.len(), 6)
        );
        let mut q = sqlx::query(&sql);
        for e in chunk {
            q = q
                .bind(uuid::Uuid::new_v4().to_string())
                .bind(e.kind.as_str())
                .bind(e.counter_id)
                .bind(e.project_id)
                .bind(e.data.to_string())
                .bind(now);
        }
        q.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Appends `event` in a transaction of its own unless the last event of its counter is of the same kind already: for
/// a state that is refused again and again (a counter behind its witness refuses every batch until it is resumed),
/// told once per episode.
pub(crate) async fn append_once(db: &Db, event: &Event, now: i64) -> Result<(), sqlx::Error> {
    let mut tx = db.begin_write().await?;
    let last: Option<(String,)> = sqlx::query_as("SELECT kind FROM notification_outbox WHERE counter_id = ? ORDER BY id DESC LIMIT 1")
        .bind(event.counter_id)
        .fetch_optional(&mut *tx)
        .await?;
    if last.is_some_and(|(k,)| k == event.kind.as_str()) {
        return Ok(());
    }
    append(&mut tx, std::slice::from_ref(event), now).await?;
    tx.commit().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(before: i64, after: i64, max: i64) -> Vec<u8> {
        crossed(before, after, max).map(|(p, _)| p).collect()
    }

    #[test]
    fn each_threshold_is_crossed_once() {
        assert_eq!(kinds(0, 89, 100), Vec::<u8>::new());
        assert_eq!(kinds(89, 90, 100), vec![90]);
        assert_eq!(kinds(90, 94, 100), Vec::<u8>::new(), "already past 90 %");
        assert_eq!(kinds(94, 95, 100), vec![95]);
        assert_eq!(kinds(80, 100, 100), vec![90, 95], "one batch may cross both");
        assert_eq!(kinds(95, 99, 100), Vec::<u8>::new());
        // 90 % of 9999 is 8999.1: 8999 is below, 9000 past
        assert_eq!(kinds(8998, 8999, 9999), Vec::<u8>::new());
        assert_eq!(kinds(8999, 9000, 9999), vec![90]);
        // a reset lowered the counter: crossing again is a new event
        assert_eq!(kinds(0, 91, 100), vec![90]);
        // no range known: nothing to cross; no overflow at the top
        assert_eq!(kinds(0, 10, 0), Vec::<u8>::new());
        assert_eq!(kinds(0, i64::MAX, i64::MAX), vec![90, 95]);
    }
}
