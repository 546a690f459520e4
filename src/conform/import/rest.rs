//! The REST dumps of a run: the job's plan (edges, decided parallelism, records emitted) and,
//! per checkpoint, the subtasks finished at trigger time.

use super::{str_field, vertex_id_of, Importer};
use crate::conform::logline;
use crate::conform::trace::{EdgeInfo, Event, VertexInfo};
use crate::conform::InputError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Reads a JSON file, or its gzip'd copy `<name>.gz` (committed fixtures keep REST dumps
/// gzip'd).
pub(super) fn read_json(path: &Path) -> Result<Value, InputError> {
    let place = path.display().to_string();
    let gz = PathBuf::from(format!("{}.gz", path.display()));
    let text = if !path.exists() && gz.exists() {
        logline::read_text(&gz)?
    } else {
        std::fs::read_to_string(path).map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::NotFound {
                "missing REST dump or run file".to_owned()
            } else {
                format!("cannot read: {e}")
            };
            InputError::new(&place, what)
        })?
    };
    serde_json::from_str(&text).map_err(|e| InputError::new(place, format!("not JSON: {e}")))
}

/// Whether `path` or its gzip'd copy exists.
pub(super) fn exists(path: &Path) -> bool {
    path.exists() || PathBuf::from(format!("{}.gz", path.display())).exists()
}

/// Vertices (meta.json's order) and edges (REST plan) of the job.
pub(super) fn job_shape(
    meta: &Value,
    job: &Value,
    meta_place: &str,
    job_path: &Path,
) -> Result<(Vec<VertexInfo>, Vec<EdgeInfo>), InputError> {
    let job_place = job_path.display().to_string();
    let meta_vertices = meta
        .get("vertices")
        .and_then(Value::as_array)
        .ok_or_else(|| InputError::new(meta_place, "no \"vertices\" list"))?;
    let mut vertices = Vec::new();
    for (i, v) in meta_vertices.iter().enumerate() {
        let at = format!("{meta_place}: vertices[{i}]");
        let flink_id = str_field(v, "id", &at)?;
        let flink_name = str_field(v, "name", &at)?;
        let parallelism = v
            .get("parallelism")
            .and_then(Value::as_i64)
            .ok_or_else(|| InputError::new(&at, "no integer \"parallelism\""))?;
        let id = v
            .get("flinksim_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| vertex_id_of(&flink_name));
        vertices.push(VertexInfo {
            id,
            parallelism: u32::try_from(parallelism).unwrap_or(0),
            flink_id,
            flink_name,
            records_out: None,
        });
    }
    let nodes = job
        .pointer("/plan/nodes")
        .and_then(Value::as_array)
        .ok_or_else(|| InputError::new(&job_place, "no plan.nodes: not a /jobs/<id> dump"))?;
    let name_of = |flink_id: &str| {
        vertices
            .iter()
            .find(|v| v.flink_id == flink_id)
            .map(|v| v.id.clone())
    };
    let mut edges = Vec::new();
    for node in nodes {
        let to_id = str_field(node, "id", &job_place)?;
        let to = name_of(&to_id).ok_or_else(|| {
            InputError::new(
                &job_place,
                format!("vertex {to_id} is not in meta.json's vertices"),
            )
        })?;
        for input in node
            .get("inputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let from_id = str_field(input, "id", &job_place)?;
            let from = name_of(&from_id).ok_or_else(|| {
                InputError::new(
                    &job_place,
                    format!("input {from_id} is not in meta.json's vertices"),
                )
            })?;
            let strategy = input
                .get("ship_strategy")
                .and_then(Value::as_str)
                .unwrap_or("");
            // Flink's pointwise partitioners connect subtasks like flinksim's `forward`.
            let pattern = match strategy {
                "FORWARD" | "RESCALE" => "forward",
                _ => "all_to_all",
            };
            edges.push(EdgeInfo {
                from,
                to: to.clone(),
                pattern: pattern.to_owned(),
            });
        }
    }
    // REST knows decided parallelism (adaptive batch) where meta.json may not.
    for v in &mut vertices {
        let rest_vertex = job
            .get("vertices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|jv| jv.get("id").and_then(Value::as_str) == Some(&v.flink_id));
        v.records_out = rest_vertex
            .and_then(|jv| jv.pointer("/metrics/write-records"))
            .and_then(Value::as_u64);
        let rest_p = rest_vertex
            .and_then(|jv| jv.get("parallelism"))
            .and_then(Value::as_i64)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|&p| p > 0);
        if let Some(p) = rest_p {
            v.parallelism = p;
        }
    }
    Ok((vertices, edges))
}

/// The plan's finished set per checkpoint from the REST statistics: subtasks shown completed,
/// with no state, no later than the coordinator logged the trigger were finished when it was
/// triggered.
pub(super) fn rest_checkpoints(
    dir: &Path,
    vertices: &[VertexInfo],
    importer: &mut Importer,
) -> Result<(), InputError> {
    let rest = dir.join("rest");
    let overview = read_json(&rest.join("checkpoints.json"))?;
    if overview.get("counts").is_none() {
        return Err(InputError::new(
            rest.join("checkpoints.json").display().to_string(),
            "no \"counts\": not a /jobs/<id>/checkpoints dump",
        ));
    }
    let ids: Vec<u64> = importer.triggered_at.keys().copied().collect();
    for id in ids {
        let detail_path = rest.join(format!("checkpoint-{id}.json"));
        if !exists(&detail_path) {
            // REST keeps only `web.checkpoints.history` checkpoints: no finished set then.
            continue;
        }
        let detail = read_json(&detail_path)?;
        if detail
            .get("trigger_timestamp")
            .and_then(Value::as_i64)
            .is_none()
        {
            return Err(InputError::new(
                detail_path.display().to_string(),
                "no trigger_timestamp: not a /checkpoints/details/<id> dump",
            ));
        }
        // The coordinator marks the subtasks it found finished as acknowledged when it
        // creates the pending checkpoint, just before it logs "Triggering checkpoint": a real
        // acknowledgement needs the trigger RPC first, and carries state.
        let created_ms = importer
            .triggered_epoch_ms
            .get(&id)
            .copied()
            .unwrap_or(i64::MIN);
        let mut finished = Vec::new();
        for v in vertices {
            let path = rest.join(format!("checkpoint-{id}-subtasks-{}.json", v.flink_id));
            let sub = read_json(&path)?;
            let place = path.display().to_string();
            let subtasks = sub
                .get("subtasks")
                .and_then(Value::as_array)
                .ok_or_else(|| InputError::new(&place, "no \"subtasks\" list"))?;
            for s in subtasks {
                let index = s
                    .get("index")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| InputError::new(&place, "a subtask without \"index\""))?;
                let completed = s.get("status").and_then(Value::as_str) == Some("completed");
                let ack = s.get("ack_timestamp").and_then(Value::as_i64);
                let size = s.get("checkpointed_size").and_then(Value::as_i64);
                if completed && ack.is_some_and(|a| a <= created_ms) && size == Some(0) {
                    finished.push(format!("{}[{index}]", v.id));
                }
            }
        }
        let fully: Vec<String> = vertices
            .iter()
            .filter(|v| {
                (0..v.parallelism.max(1)).all(|i| finished.contains(&format!("{}[{i}]", v.id)))
            })
            .map(|v| v.id.clone())
            .collect();
        if let Some(&i) = importer.triggered_at.get(&id) {
            if let Event::CheckpointTriggered {
                finished: f,
                fully_finished,
                ..
            } = &mut importer.entries[i].2.event
            {
                *f = Some(finished);
                *fully_finished = Some(fully);
            }
        }
    }
    Ok(())
}
