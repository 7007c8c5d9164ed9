//! Layer 3 (thunk) finding ids.

use crate::finding::declare_rules;

declare_rules! {
THUNK_RULES;}
