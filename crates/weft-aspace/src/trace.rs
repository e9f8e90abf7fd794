//! Provenance: why a pointer has a label, as a shortest chain of reasons from the allocation,
//! parameter or cast that introduced the label to the pointer (digest 7.3, "each message
//! explains the provenance chain").
//!
//! Chains are computed on demand by a backward search over the flow graph instead of being
//! recorded during unification. Edges in flow direction cost 1; edges against it ("leaks"
//! through a shared row tail, the over-approximation of digest 8.20) cost 16, so a chain uses a
//! leak only when no forward explanation exists. Only nodes whose row contains the label are
//! visited, so a chain never passes through a pointer that cannot hold the label.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::program::Reason;

/// The origin of a label and the chain of reasons leading from it to the traced pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trace {
    /// How messages name the origin: `` `g` `` or `the cast to local`.
    pub(crate) origin: String,
    pub(crate) chain: Vec<Reason>,
}

/// One predecessor of a node in the backward search.
pub(crate) enum Pred<K> {
    /// The label may have come from `from` through the fact described by `reason`.
    Step { from: K, reason: Reason, leak: bool },
    /// The node itself introduces the label.
    Origin(Trace),
}

const FORWARD_COST: u32 = 1;
const LEAK_COST: u32 = 16;

enum Item<K> {
    Node(K),
    Origin(K, Trace),
}

/// The cheapest chain from an origin to `start`, or `None` if no origin is reachable.
pub(crate) fn trace<K: Copy + Ord>(
    start: K,
    mut preds: impl FnMut(K) -> Vec<Pred<K>>,
    contains: impl Fn(K) -> bool,
) -> Option<Trace> {
    let mut best: BTreeMap<K, u32> = BTreeMap::new();
    // `parent[m] = (n, reason)`: the label went from `m` to `n` (one step closer to `start`).
    let mut parent: BTreeMap<K, (K, Reason)> = BTreeMap::new();
    let mut settled: BTreeMap<K, ()> = BTreeMap::new();
    let mut items: Vec<Item<K>> = vec![Item::Node(start)];
    let mut heap = BinaryHeap::new();
    heap.push(Reverse((0u32, 0usize)));
    best.insert(start, 0);
    while let Some(Reverse((cost, item_idx))) = heap.pop() {
        match &items[item_idx] {
            Item::Origin(node, origin) => {
                let mut chain = origin.chain.clone();
                let mut cursor = *node;
                while let Some((next, reason)) = parent.get(&cursor) {
                    chain.push(reason.clone());
                    cursor = *next;
                }
                return Some(Trace { origin: origin.origin.clone(), chain });
            }
            Item::Node(node) => {
                let node = *node;
                if settled.insert(node, ()).is_some() {
                    continue;
                }
                for pred in preds(node) {
                    match pred {
                        Pred::Origin(origin) => {
                            items.push(Item::Origin(node, origin));
                            heap.push(Reverse((cost, items.len() - 1)));
                        }
                        Pred::Step { from, reason, leak } => {
                            if settled.contains_key(&from) || !contains(from) {
                                continue;
                            }
                            let next = cost + if leak { LEAK_COST } else { FORWARD_COST };
                            if best.get(&from).is_some_and(|known| *known <= next) {
                                continue;
                            }
                            best.insert(from, next);
                            parent.insert(from, (node, reason));
                            items.push(Item::Node(from));
                            heap.push(Reverse((next, items.len() - 1)));
                        }
                    }
                }
            }
        }
    }
    None
}
