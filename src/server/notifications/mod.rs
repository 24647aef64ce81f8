//! Notifications (docs/rules/api.md#notifications-and-live-screens): the outbox's events delivered at least once to the webhooks
//! super admins configure, and what waits for the viewer (the header's count).
//!
//! The events are written by their emitters into `notification_outbox` in the transactions of their changes
//! (`outbox`, below the engine). Here, above them: the webhooks' management (super admins; each change an `admin`-chain
//! audit row in its transaction), and the worker each instance runs ([`Notifier::spawn`]): it fans each new event out
//! to the active webhooks that want its kind (one delivery row per webhook and event, claimed by a conditional UPDATE
//! of the event's `fanned_out`), then delivers what is due. A delivery is leased to one instance by a conditional
//! UPDATE (`store::claim`), so several instances never send the same one at once; a lease outlives the attempt's
//! timeout, and one whose instance died runs out and is taken again (at least once, never lost). Events of one
//! counter reach a webhook in the order they were written: a delivery waits while an earlier one of its counter for
//! the same webhook is not delivered (a FAILED one holds the line until it is replayed). A body is signed with the
//! webhook's secret (`X-Docnum-Signature: sha256=<hex HMAC-SHA256 of the body>`); a failed attempt is retried after
//! an exponential backoff with jitter, up to `NOTIFY_MAX_ATTEMPTS`, then FAILED until a super admin replays it.

pub(crate) mod http;
pub(crate) mod store;
pub mod targets;

use std::sync::Arc;
use std::time::Duration;

use hmac::{Hmac, Mac};
use rand::Rng;
use serde_json::{json, Value};
use sha2::Sha256;

use crate::contract::messages::NotificationDetail;
use crate::contract::notifications::{
    DeliveryId, DeliveryState, DeliveryView, EventKind, NewWebhook, Replayed, Waiting, WebhookCreated, WebhookId, WebhookView,
    MAX_WEBHOOK_SECRET_CHARS, MAX_WEBHOOK_URL_CHARS, MIN_WEBHOOK_SECRET_CHARS,
};
use crate::contract::Role;
use crate::numbering::CounterId;
use crate::server::audit::{self, AuditEntry, ADMIN_CHAIN};
use crate::server::auth::Caller;
use crate::server::clock::Clock;
pub use crate::server::config::NotifyConfig;
use crate::server::db::{ms_to_datetime, Db};
use crate::server::error::{echo, AppError};
use crate::server::secrets;

/// The reset workflow whose pending requests wait for a super admin (`admin_ops::RESET_WORKFLOW`).
const RESET_WORKFLOW: &str = "COUNTER_RESET";
/// Events fanned out, and deliveries claimed, per round of the worker.
const ROUND: i64 = 64;
/// The longest wait between two attempts of a delivery.
const MAX_BACKOFF: Duration = Duration::from_secs(3600);
/// The most deliveries a list answers.
const MAX_LISTED: i64 = 500;

/// The notifications' handle: the database, the service clock, the delivery settings, the HTTP client, and the
/// stop signal of this instance's worker.
pub struct Notifier {
    pub(crate) db: Db,
    pub(crate) clock: Arc<Clock>,
    pub(crate) config: NotifyConfig,
    client: reqwest::Client,
    /// Who holds a lease: this process (host, pid) and this notifier (several run in one test process).
    owner: String,
    stop: tokio::sync::watch::Sender<bool>,
}

impl Notifier {
    pub fn new(db: Db, clock: Arc<Clock>, config: NotifyConfig, instance: &str) -> Result<Notifier, AppError> {
        let mut builder = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            // a receiver answers itself; a redirect is a misconfigured URL, shown as its status (and never a way to
            // an internal address: `targets`)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent("docnum-notifications")
            // https: the system store (or SSL_CERT_FILE), and NOTIFY_CA_FILE's certificates
            .use_rustls_tls()
            .tls_built_in_root_certs(true);
        if let Some(path) = &config.ca_file {
            let pem = std::fs::read(path).map_err(|e| AppError::internal(format!("NOTIFY_CA_FILE {}: {e}", path.display())))?;
            let certs =
                reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| AppError::internal(format!("NOTIFY_CA_FILE {}: {e}", path.display())))?;
            if certs.is_empty() {
                return Err(AppError::internal(format!("NOTIFY_CA_FILE {}: no certificate in it", path.display())));
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        if !config.allow_private_targets {
            // a name is resolved to its public addresses only, at each connection
            builder = builder.dns_resolver(Arc::new(targets::PublicOnly));
        }
        let client = builder.build().map_err(|e| AppError::internal_from("the webhooks' HTTP client", e))?;
        let owner = format!("{instance}/{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        Ok(Notifier { db, clock, config, client, owner, stop: tokio::sync::watch::Sender::new(false) })
    }

    /// Runs the worker on the current runtime until [`Notifier::stop`]: a round at once, then another as soon as one
    /// found work, else after the poll interval. A round in progress is dropped at the stop (its leases run out; the
    /// deliveries are sent again later: at least once).
    pub fn spawn(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let n = self.clone();
        let mut stopped = self.stop.subscribe();
        tokio::spawn(async move {
            loop {
                let busy = tokio::select! {
                    _ = stopped.wait_for(|s| *s) => return,
                    worked = n.round() => match worked {
                        Ok(done) => done > 0,
                        Err(e) => {
                            tracing::warn!(error = %e.report(), "notifications: a round failed");
                            false
                        }
                    },
                };
                if !busy {
                    tokio::select! {
                        _ = stopped.wait_for(|s| *s) => return,
                        () = tokio::time::sleep(n.config.poll) => {}
                    }
                }
            }
        })
    }

    /// Ends the worker (the server is stopping).
    pub(crate) fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// One round: fan the new events out, then deliver what is due. Returns how much it did.
    pub(crate) async fn round(&self) -> Result<usize, AppError> {
        let fanned = self.fan_out().await?;
        let delivered = self.deliver_due().await?;
        Ok(fanned + delivered)
    }

    /// Writes a delivery for each new event and each active webhook that wants its kind; marks the event fanned out.
    async fn fan_out(&self) -> Result<usize, AppError> {
        let events = store::unfanned(&self.db, ROUND).await?;
        if events.is_empty() {
            return Ok(0);
        }
        let hooks: Vec<(WebhookId, Vec<EventKind>)> =
            store::active_webhooks(&self.db).await?.into_iter().map(|(id, kinds)| (id, kinds_of(&kinds))).collect();
        let now = self.clock.now_ms();
        for e in &events {
            let mut tx = self.db.begin_write().await?;
            if !store::take_for_fan_out(&mut tx, e.id).await? {
                continue; // another instance fanned it out
            }
            let kind = EventKind::parse(&e.kind);
            let rows: Vec<(WebhookId, i64, CounterId)> = hooks
                .iter()
                .filter(|(_, kinds)| kinds.is_empty() || kind.is_some_and(|k| kinds.contains(&k)))
                .map(|(hook, _)| (*hook, e.id, e.counter_id.unwrap_or(CounterId::NONE)))
                .collect();
            store::insert_deliveries(&mut tx, &rows, now).await?;
            tx.commit().await?;
        }
        Ok(events.len())
    }

    /// Claims the due deliveries (at most a round's worth) and sends them at once, each in its own task's time.
    async fn deliver_due(&self) -> Result<usize, AppError> {
        let now = self.clock.now_ms();
        let lease = now + lease_ms(&self.config);
        let mut claimed = Vec::new();
        for id in store::due(&self.db, now, ROUND).await? {
            if store::claim(&self.db, id, &self.owner, now, lease).await? {
                claimed.push(id);
            }
        }
        let sent = futures::future::join_all(claimed.iter().map(|&id| self.deliver(id))).await;
        for r in sent {
            if let Err(e) = r {
                tracing::warn!(error = %e.report(), "notifications: recording a delivery failed");
            }
        }
        Ok(claimed.len())
    }

    /// One attempt of a claimed delivery, and its outcome recorded under the lease.
    async fn deliver(&self, id: DeliveryId) -> Result<(), AppError> {
        let Some(out) = store::outgoing(&self.db, id).await? else { return Ok(()) };
        let body = body_of(&out);
        let outcome = match self.refusal(&out.url) {
            Some(why) => Err((None, why)),
            None => match secrets::open(self.config.secrets_key.as_ref(), &out.secret) {
                Err(why) => Err((None, format!("the webhook's secret: {why}"))),
                Ok(secret) => {
                    let sent = self
                        .client
                        .post(&out.url)
                        .header(reqwest::header::CONTENT_TYPE, "application/json")
                        .header("X-Docnum-Event-Id", &out.event_id)
                        .header("X-Docnum-Event-Kind", &out.kind)
                        .header("X-Docnum-Signature", format!("sha256={}", sign(&secret, body.as_bytes())))
                        .body(body)
                        .send()
                        .await;
                    match &sent {
                        Ok(r) if r.status().is_success() => Ok(i64::from(r.status().as_u16())),
                        Ok(r) => Err((Some(i64::from(r.status().as_u16())), format!("HTTP {}", r.status()))),
                        Err(e) => Err((None, crate::server::error::report(e))),
                    }
                }
            },
        };
        let now = self.clock.now_ms();
        let attempts = out.attempts + 1;
        let next = match &outcome {
            Ok(_) => None,
            Err((_, why)) => {
                let next = (attempts < i64::from(self.config.max_attempts)).then(|| now + backoff_ms(&self.config, attempts));
                tracing::info!(delivery = id.0, event = %out.event_id, attempts, error = %why, retry = next.is_some(), "webhook delivery failed");
                next
            }
        };
        let outcome = outcome.as_ref().map(|s| *s).map_err(|(s, why)| (*s, why.as_str()));
        Ok(store::record_attempt(&self.db, id, &self.owner, now, outcome, next).await?)
    }
}

impl Notifier {
    /// Why a delivery to this URL is not sent, when its host is an internal address written as such (a name is
    /// checked by the client's resolver, `targets::PublicOnly`).
    fn refusal(&self, url: &str) -> Option<String> {
        if self.config.allow_private_targets {
            return None;
        }
        let parsed = url::Url::parse(url).ok()?;
        let ip = targets::literal_host(&parsed)?;
        targets::refused(ip)
            .map(|why| format!("webhook target {ip} refused ({why}); set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow internal receivers"))
    }

    /// Seals the signing secrets stored before `SECRETS_KEY` was set (none without a key). Returns how many.
    pub async fn seal_stored_secrets(&self) -> Result<usize, AppError> {
        let Some(key) = &self.config.secrets_key else { return Ok(0) };
        let mut sealed = 0;
        for (id, stored) in store::secrets(&self.db.pool).await? {
            if !secrets::is_sealed(&stored) && store::replace_secret(&self.db, id, &stored, &key.seal(&stored)).await? {
                sealed += 1;
            }
        }
        Ok(sealed)
    }
}

/// How long a claim holds: past the attempt's timeout, so a slow receiver is not sent the same event by another
/// instance meanwhile; short enough that a crashed instance's deliveries are taken over soon.
fn lease_ms(config: &NotifyConfig) -> i64 {
    i64::try_from((config.timeout * 2 + Duration::from_secs(5)).as_millis()).unwrap_or(i64::MAX)
}

/// The wait after the `attempts`-th failure: the base doubled per earlier failure (at most an hour), of which a random
/// half is taken off (jitter: receivers that came back are not hit by every sender at once).
fn backoff_ms(config: &NotifyConfig, attempts: i64) -> i64 {
    let doublings = u32::try_from(attempts.saturating_sub(1)).unwrap_or(u32::MAX).min(20);
    let full = config.backoff_base.saturating_mul(1 << doublings).min(MAX_BACKOFF);
    let full = i64::try_from(full.as_millis()).unwrap_or(i64::MAX).max(1);
    full - rand::thread_rng().gen_range(0..=full / 2)
}

/// The signature of a body: hex HMAC-SHA256 with the webhook's secret (sent as `sha256=<hex>`).
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// What a receiver gets: `{eventId, kind, occurredAt, counterId, projectId, data}`. The same bytes at every attempt.
fn body_of(out: &store::Outgoing) -> String {
    let data: Value = serde_json::from_str(&out.payload).unwrap_or(Value::Null);
    json!({
        "eventId": out.event_id,
        "kind": out.kind,
        "occurredAt": ms_to_datetime(out.created_at).to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "counterId": out.counter_id,
        "projectId": out.project_id,
        "data": data,
    })
    .to_string()
}

fn kinds_of(stored: &str) -> Vec<EventKind> {
    stored.split(',').filter_map(EventKind::parse).collect()
}

// ---- the webhooks' management (super admins) ----

fn webhook_view(w: store::WebhookRow) -> WebhookView {
    WebhookView {
        id: w.id,
        kinds: kinds_of(&w.kinds),
        url: w.url,
        active: w.active != 0,
        created_by: w.created_by,
        created_at: ms_to_datetime(w.created_at),
        failed: w.failed,
        pending: w.pending,
    }
}

fn webhook_not_found(id: WebhookId) -> AppError {
    AppError::not_found(NotificationDetail::Webhook { id: &id })
}

/// A webhook URL: http:// or https:// with a host, at most [`MAX_WEBHOOK_URL_CHARS`].
fn check_url(url: &str) -> Result<String, AppError> {
    let url = url.trim();
    if url.chars().count() > MAX_WEBHOOK_URL_CHARS {
        return Err(AppError::validation(NotificationDetail::UrlTooLong { max: &MAX_WEBHOOK_URL_CHARS }));
    }
    // as the schema states it (`lenient::schema::webhook_url`): the scheme written first, no control character (the
    // URL parser would drop a tab inside `http` or a control character before it, and accept what the schema refuses)
    let lower = url.to_ascii_lowercase();
    let written = (lower.starts_with("http://") || lower.starts_with("https://")) && !url.chars().any(char::is_control);
    let parsed =
        url::Url::parse(url).ok().filter(|u| written && matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty()));
    match parsed {
        Some(_) => Ok(url.to_string()),
        None => Err(AppError::validation(NotificationDetail::UrlShape)),
    }
}

/// A secret given by the caller (visible ASCII, 16–200 characters), or a generated one (32 random bytes, hex).
fn secret_of(given: Option<&str>) -> Result<String, AppError> {
    match given.map(str::trim).filter(|s| !s.is_empty()) {
        None => {
            let bytes: [u8; 32] = rand::thread_rng().gen();
            Ok(hex::encode(bytes))
        }
        // a given secret never reads as a sealed one (`secrets::SEALED_PREFIX`)
        Some(s)
            if (MIN_WEBHOOK_SECRET_CHARS..=MAX_WEBHOOK_SECRET_CHARS).contains(&s.chars().count())
                && s.chars().all(|c| c.is_ascii_graphic())
                && !s.starts_with("enc:") =>
        {
            Ok(s.to_string())
        }
        Some(_) => Err(AppError::validation(NotificationDetail::SecretShape {
            min: &MIN_WEBHOOK_SECRET_CHARS,
            max: &MAX_WEBHOOK_SECRET_CHARS,
            prefix: &"enc:",
        })),
    }
}

fn audit_entry(actor: &AuditEntry, operation: &str, old: Option<&str>, new: Option<&str>, metadata: Value) -> AuditEntry {
    AuditEntry {
        operation: operation.into(),
        status: "SUCCESS".into(),
        old_value: old.map(str::to_string),
        new_value: new.map(str::to_string),
        metadata: Some(metadata.to_string()),
        ..actor.clone()
    }
}

/// `GET /notifications/webhooks`.
pub(crate) async fn webhooks(n: &Notifier, caller: &Caller) -> Result<Vec<WebhookView>, AppError> {
    caller.require_super_admin()?;
    Ok(store::webhooks(&n.db.pool).await?.into_iter().map(webhook_view).collect())
}

/// `POST /notifications/webhooks`: the secret is in the answer, this once.
pub(crate) async fn create_webhook(n: &Notifier, caller: &Caller, new: &NewWebhook) -> Result<WebhookCreated, AppError> {
    caller.require_super_admin()?;
    let url = check_url(&new.url)?;
    if !n.config.allow_private_targets {
        let parsed = url::Url::parse(&url).map_err(|_| AppError::validation(NotificationDetail::UrlUnparsable))?;
        if let Some((ip, why)) = targets::first_refused(&parsed).await {
            return Err(AppError::validation(NotificationDetail::PrivateTarget { ip: &ip, why: &why }));
        }
    }
    let secret = secret_of(new.secret.as_deref())?;
    let stored_secret = match &n.config.secrets_key {
        Some(key) => key.seal(&secret),
        None => secret.clone(),
    };
    let mut kinds: Vec<EventKind> = Vec::new();
    for k in &new.kinds {
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
    let stored_kinds = kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",");
    let actor = caller.audit_base(n.clock.now_ms());
    let mut tx = n.db.begin_write().await?;
    let id = store::insert_webhook(&mut tx, &url, &stored_secret, &stored_kinds, &caller.display_name(), actor.created_at).await?;
    let entry = audit_entry(&actor, "WEBHOOK_CREATED", None, Some("ACTIVE"), json!({ "webhookId": id, "url": url, "kinds": kinds }));
    audit::append(&mut tx, n.db.dialect, ADMIN_CHAIN, &[entry]).await?;
    let created = store::webhook(&mut *tx, id).await?.ok_or_else(|| AppError::internal("webhook vanished"))?;
    tx.commit().await?;
    Ok(WebhookCreated { webhook: webhook_view(created), secret })
}

/// `PATCH /notifications/webhooks/{id}`: enabled or disabled (a disabled one gets no new events and sends nothing).
pub(crate) async fn set_active(n: &Notifier, caller: &Caller, id: WebhookId, active: bool) -> Result<WebhookView, AppError> {
    caller.require_super_admin()?;
    let actor = caller.audit_base(n.clock.now_ms());
    let mut tx = n.db.begin_write().await?;
    let before = store::webhook(&mut *tx, id).await?.ok_or_else(|| webhook_not_found(id))?;
    store::set_active(&mut tx, id, active).await?;
    let state = |a: bool| if a { "ACTIVE" } else { "DISABLED" };
    let entry =
        audit_entry(&actor, "WEBHOOK_UPDATED", Some(state(before.active != 0)), Some(state(active)), json!({ "webhookId": id, "url": before.url }));
    audit::append(&mut tx, n.db.dialect, ADMIN_CHAIN, &[entry]).await?;
    let after = store::webhook(&mut *tx, id).await?.ok_or_else(|| webhook_not_found(id))?;
    tx.commit().await?;
    Ok(webhook_view(after))
}

/// `DELETE /notifications/webhooks/{id}`: the webhook and its deliveries.
pub(crate) async fn delete_webhook(n: &Notifier, caller: &Caller, id: WebhookId) -> Result<(), AppError> {
    caller.require_super_admin()?;
    let actor = caller.audit_base(n.clock.now_ms());
    let mut tx = n.db.begin_write().await?;
    let before = store::webhook(&mut *tx, id).await?.ok_or_else(|| webhook_not_found(id))?;
    if !store::delete_webhook(&mut tx, id).await? {
        return Err(webhook_not_found(id));
    }
    let entry = audit_entry(&actor, "WEBHOOK_DELETED", Some("ACTIVE"), None, json!({ "webhookId": id, "url": before.url }));
    audit::append(&mut tx, n.db.dialect, ADMIN_CHAIN, &[entry]).await?;
    tx.commit().await?;
    Ok(())
}

/// `GET /notifications/deliveries?state&webhookId`: newest event first, at most 500.
pub(crate) async fn deliveries(
    n: &Notifier,
    caller: &Caller,
    state: Option<&str>,
    webhook_id: Option<WebhookId>,
) -> Result<Vec<DeliveryView>, AppError> {
    caller.require_super_admin()?;
    let state = match state.map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(DeliveryState::parse(s).ok_or_else(|| AppError::validation(NotificationDetail::DeliveryStateUnknown { given: &echo(s) }))?),
    };
    let rows = store::deliveries(&n.db, state, webhook_id, MAX_LISTED).await?;
    Ok(rows
        .into_iter()
        .filter_map(|d| {
            Some(DeliveryView {
                kind: EventKind::parse(&d.kind)?,
                state: DeliveryState::parse(&d.state)?,
                id: d.id,
                webhook_id: d.webhook_id,
                webhook_url: d.webhook_url,
                event_id: d.event_id,
                counter_id: d.counter_id,
                attempts: d.attempts,
                next_attempt_at: ms_to_datetime(d.next_attempt_at),
                last_status: d.last_status,
                last_error: d.last_error,
                delivered_at: d.delivered_at.map(ms_to_datetime),
                occurred_at: ms_to_datetime(d.occurred_at),
            })
        })
        .collect())
}

/// `POST /notifications/deliveries/{id}/replay`: a FAILED delivery due again, its attempts counted afresh (409 for one
/// that is not FAILED).
pub(crate) async fn replay(n: &Notifier, caller: &Caller, id: DeliveryId) -> Result<Replayed, AppError> {
    caller.require_super_admin()?;
    let actor = caller.audit_base(n.clock.now_ms());
    let mut tx = n.db.begin_write().await?;
    let (webhook_id, state) =
        store::delivery_webhook(&mut tx, id).await?.ok_or_else(|| AppError::not_found(NotificationDetail::Delivery { id: &id }))?;
    if state != DeliveryState::Failed.as_str() {
        return Err(AppError::conflict(crate::contract::ErrorCode::WfInvalidTransition, NotificationDetail::ReplayNotFailed { state: &state }));
    }
    let replayed = store::replay(&mut tx, Some(id), None, actor.created_at).await?;
    let entry = audit_entry(&actor, "NOTIFICATION_REPLAYED", Some("FAILED"), Some("PENDING"), json!({ "deliveryId": id, "webhookId": webhook_id }));
    audit::append(&mut tx, n.db.dialect, ADMIN_CHAIN, &[entry]).await?;
    tx.commit().await?;
    Ok(Replayed { replayed: replayed as i64 })
}

/// `POST /notifications/webhooks/{id}/replay`: every FAILED delivery of the webhook due again.
pub(crate) async fn replay_failed(n: &Notifier, caller: &Caller, webhook_id: WebhookId) -> Result<Replayed, AppError> {
    caller.require_super_admin()?;
    let actor = caller.audit_base(n.clock.now_ms());
    let mut tx = n.db.begin_write().await?;
    store::webhook(&mut *tx, webhook_id).await?.ok_or_else(|| webhook_not_found(webhook_id))?;
    let replayed = store::replay(&mut tx, None, Some(webhook_id), actor.created_at).await?;
    if replayed > 0 {
        let entry =
            audit_entry(&actor, "NOTIFICATION_REPLAYED", Some("FAILED"), Some("PENDING"), json!({ "webhookId": webhook_id, "count": replayed }));
        audit::append(&mut tx, n.db.dialect, ADMIN_CHAIN, &[entry]).await?;
    }
    tx.commit().await?;
    Ok(Replayed { replayed: replayed as i64 })
}

/// What waits for the caller: for a super admin, the reset requests another one made (a reset needs a second person);
/// nothing in the workflows waits for anyone else.
pub(crate) async fn waiting(db: &Db, caller: &Caller) -> Result<Waiting, AppError> {
    Ok(match caller.user() {
        Some(u) if u.role == Role::SuperAdmin => Waiting { reset_requests: store::resets_waiting_for(db, u.id, RESET_WORKFLOW).await? },
        _ => Waiting::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2
        assert_eq!(sign("Jefe", b"what do ya want for nothing?"), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        assert_ne!(sign("Jefe", b"what do ya want for nothing!"), sign("Jefe", b"what do ya want for nothing?"));
    }

    #[test]
    fn the_backoff_doubles_with_jitter_and_stops_at_an_hour() {
        let config = NotifyConfig { backoff_base: Duration::from_millis(1000), ..NotifyConfig::default() };
        for _ in 0..50 {
            let first = backoff_ms(&config, 1);
            assert!((500..=1000).contains(&first), "{first}");
            let third = backoff_ms(&config, 3);
            assert!((2000..=4000).contains(&third), "{third}");
            let late = backoff_ms(&config, 60);
            assert!((1_800_000..=3_600_000).contains(&late), "{late}");
        }
    }

    #[test]
    fn webhook_urls_are_http_or_https_with_a_host() {
        assert!(check_url(" https://dms.example.com/hooks ").is_ok());
        assert!(check_url("http://127.0.0.1:9000/x").is_ok());
        assert!(check_url("HTTPS://dms.example.com/hooks").is_ok());
        // what the URL parser alone would take, but the schema does not: a tab inside the scheme, a control before it
        for bad in ["ftp://example.com", "javascript:alert(1)", "example.com/hook", "http://", "", "ht\ttp://example.com", "\u{1}http://example.com"]
        {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        assert!(check_url(&format!("https://e.com/{}", "a".repeat(MAX_WEBHOOK_URL_CHARS))).is_err());
    }

    #[test]
    fn a_secret_is_generated_or_checked() {
        assert_eq!(secret_of(None).unwrap().len(), 64);
        assert_eq!(secret_of(Some("  ")).unwrap().len(), 64);
        assert!(secret_of(Some("short")).is_err());
        assert!(secret_of(Some("sixteen-chars-ok")).is_ok());
        assert!(secret_of(Some("sixteen chars no")).is_err(), "no spaces");
    }
}
