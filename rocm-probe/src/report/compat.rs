//! Report documents of every schema version a fleet may run during a roll-out, read as this
//! version's shape: `diff` and `fleet` compare a node on version 1 with one on version 2.
//! `docs/json-changelog.md` lists every change; this is its executable half.

use serde_json::Value;

use super::output::SCHEMA_VERSION;

/// Turns a version 1 report document into version 2's shape, in place; a document of another
/// version, or not a report, is left as it is (callers check the version first).
///
/// Version 1 → 2: `facts.gpus` and `facts.agents` (counts) become `facts.gpu_count` and
/// `facts.agent_count`; `facts.config.gpus` (the list) becomes `facts.gpus`; a GPU's
/// `device_id` becomes a hex string. `source.host` and `generated_at`, which version 1 lacked,
/// stay absent: nothing can be known of them.
pub fn upgrade(doc: &mut Value) {
    if doc.get("schema_version").and_then(Value::as_u64) != Some(1) {
        return;
    }
    if let Some(facts) = doc.get_mut("facts").and_then(Value::as_object_mut) {
        let list = facts
            .get_mut("config")
            .and_then(Value::as_object_mut)
            .and_then(|c| c.remove("gpus"));
        for (old, new) in [("gpus", "gpu_count"), ("agents", "agent_count")] {
            if let Some(count) = facts.remove(old) {
                facts.insert(new.to_owned(), count);
            }
        }
        if let Some(mut list) = list {
            for gpu in list.as_array_mut().into_iter().flatten() {
                if let Some(id) = gpu.get("device_id").and_then(Value::as_u64) {
                    gpu["device_id"] = Value::String(crate::facts::hex::format(id));
                }
            }
            facts.insert("gpus".to_owned(), list);
        }
    }
    doc["schema_version"] = Value::from(SCHEMA_VERSION);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn version_1_reads_as_version_2_and_others_are_untouched() {
        let mut v1 = json!({
            "schema_version": 1,
            "facts": {"gpus": 2, "agents": 3, "targets": ["gfx90a"],
                      "config": {"gpus": [{"index": 0, "device_id": 29711}], "rocm": "6.2.0",
                                 "fingerprint": "f"}},
        });
        super::upgrade(&mut v1);
        assert_eq!(
            v1,
            json!({
                "schema_version": 2,
                "facts": {"gpu_count": 2, "agent_count": 3, "targets": ["gfx90a"],
                          "gpus": [{"index": 0, "device_id": "0x740f"}],
                          "config": {"rocm": "6.2.0", "fingerprint": "f"}},
            })
        );
        let before = v1.clone();
        super::upgrade(&mut v1);
        assert_eq!(v1, before);
        let mut other = json!({"schema_version": 7, "facts": {"gpus": 1}});
        super::upgrade(&mut other);
        assert_eq!(other, json!({"schema_version": 7, "facts": {"gpus": 1}}));
        let mut garbage = json!({"schema_version": 1, "facts": 3});
        super::upgrade(&mut garbage);
        assert_eq!(garbage["facts"], 3);
    }
}
