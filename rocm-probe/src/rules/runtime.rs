//! Layer 4 (runtime) finding ids.

use crate::finding::declare_rules;

declare_rules! {
RUNTIME_RULES;}
