//! Helpers shared by the integration tests that compare JSON outputs.

/// Remove what differs between two runs of the same input: times and statistics.
pub fn strip_timings(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("time_ms");
            m.remove("stats");
            m.values_mut().for_each(strip_timings);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_timings),
        _ => {}
    }
}
