//! Server functions of `/charts`: the numbering statistics. `admin_ops::stats` checks the caller.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::contract::*;
#[cfg(feature = "ssr")]
use crate::server::admin_ops::stats;
#[cfg(feature = "ssr")]
use crate::server::sfn;

/// Numbers issued per Bangkok day and correspondence type; project admins get their projects' only.
#[server(prefix = "/sfn", input = Json)]
pub async fn fetch_daily_stats(query: StatsQuery) -> Result<DailyIssued, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let e = state.engine();
    stats::daily(&e.db, &e.reference, &e.clock, &caller, &query).await.map_err(sfn::error)
}

/// The utilization of the fullest counters of the current period (or one counter) at the end of each day.
#[server(prefix = "/sfn", input = Json)]
pub async fn fetch_utilization_stats(query: StatsQuery) -> Result<UtilizationHistory, ApiError> {
    let (state, caller) = sfn::caller().await?;
    let e = state.engine();
    stats::utilization(&e.db, &e.reference, &e.clock, &caller, &query).await.map_err(sfn::error)
}
