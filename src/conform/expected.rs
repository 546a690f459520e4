//! The output a reference job must commit, computed from its recorded parameters alone
//! (`meta.json` `params`), independently of the run: every source emits `seq` = 0..records-1
//! as `(key, value) = (seq % 16, seq % 100 + 1)`; a keyed sum emits one `(key, total)` per key
//! at end of input; a job without one passes the records through.

use serde_json::Value;
use std::collections::BTreeMap;

/// `(key, value)` pairs, sorted: what the sinks must commit exactly once, in all.
pub fn output(params: &Value) -> Option<Vec<(i64, i64)>> {
    let records = source_records(params)?;
    let mut out: Vec<(i64, i64)> = Vec::new();
    let keyed = params.get("sum").is_some() || params.get("agg").is_some();
    let mut totals: BTreeMap<i64, i64> = BTreeMap::new();
    for n in records {
        for seq in 0..n as i64 {
            let (key, value) = (seq % 16, seq % 100 + 1);
            if keyed {
                *totals.entry(key).or_default() += value;
            } else {
                out.push((key, value));
            }
        }
    }
    out.extend(totals);
    out.sort_unstable();
    Some(out)
}

/// Records per source, from `params.sources.<name>.records` (streaming jobs) or
/// `params.src.records` (batch jobs).
fn source_records(params: &Value) -> Option<Vec<u64>> {
    if let Some(sources) = params.get("sources").and_then(Value::as_object) {
        let mut out = Vec::new();
        for s in sources.values() {
            // A NumberSequenceSource splits its one sequence over its subtasks.
            out.push(s.get("records")?.as_u64()?);
        }
        return Some(out);
    }
    let n = params.pointer("/src/records")?.as_u64()?;
    Some(vec![n])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_totals_cover_both_sources() {
        let params = serde_json::json!({
            "sources": {"short": {"records": 100}, "long": {"records": 1000}},
            "sum": {"keys": 16}
        });
        let out = output(&params).unwrap();
        assert_eq!(out.len(), 16);
        let total: i64 = out.iter().map(|(_, v)| v).sum();
        // 100 records give 1..=100 once; 1000 records give it ten times.
        assert_eq!(total, 11 * 5050);
    }

    #[test]
    fn a_job_without_a_sum_commits_every_record() {
        let params = serde_json::json!({"sources": {"srcA": {"records": 3}}});
        assert_eq!(output(&params).unwrap(), vec![(0, 1), (1, 2), (2, 3)]);
    }
}
