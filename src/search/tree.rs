//! The search tree: an arena (`Vec<Node>`) addressed by `u32` ids.
//!
//! The children of a node sit in one contiguous block, so a node only stores where its block
//! starts and how long it is. Nothing is freed during a search; between moves the subtree of the
//! moves actually played is copied into a fresh arena (`reroot`), which both reuses the work and
//! compacts the memory. The arena never grows past the capacity set from the `Hash` option.

use atomic_chess::Move;

/// Id of a node in the arena.
pub type NodeId = u32;

/// The root always has id 0.
pub const ROOT: NodeId = 0;
/// `prune` looks at its abort callback once per this many nodes.
const POLL_INTERVAL: usize = 4096;

/// What the solver knows about a node, from the point of view of the side to move there.
/// Distances are in plies until the game ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proof {
    /// Not proven.
    Unknown,
    /// The side to move wins in this many plies.
    Win(u16),
    /// The side to move loses in this many plies (0: the game is already lost).
    Loss(u16),
    /// The game is a draw (or already drawn).
    Draw,
}

impl Proof {
    /// The exact value for the player who moved *into* this node (0 = lost, 1 = won).
    pub fn value_for_mover(self) -> Option<f32> {
        match self {
            Proof::Unknown => None,
            Proof::Win(_) => Some(0.0),
            Proof::Loss(_) => Some(1.0),
            Proof::Draw => Some(0.5),
        }
    }
}

/// One node: a position reached by `mv` from its parent. Values are win probabilities from the
/// point of view of the player who played `mv` (so a parent simply maximises over children).
#[derive(Clone, Copy, Debug)]
pub struct Node {
    /// The move from the parent (`None` only for a fresh root).
    pub mv: Option<Move>,
    /// Id of the first child, meaningful when `children > 0`.
    pub first: NodeId,
    /// Number of children; 0 until the node is expanded.
    pub children: u16,
    /// Solver state from the point of view of the side to move here.
    pub proof: Proof,
    /// Number of playouts through this node.
    pub visits: u32,
    /// Mean playout value (Monte-Carlo mean).
    pub q: f32,
    /// Prior probability from the policy.
    pub prior: f32,
}

impl Node {
    /// A fresh child node.
    pub fn new(mv: Option<Move>, prior: f32) -> Node {
        Node {
            mv,
            first: 0,
            children: 0,
            proof: Proof::Unknown,
            visits: 0,
            q: 0.0,
            prior,
        }
    }

    /// Whether the node has children.
    pub fn is_expanded(&self) -> bool {
        self.children > 0
    }

    /// Whether `Tree::prune` with this visit threshold keeps the node's children: it has
    /// enough visits, or it is proven (the proof rests on them).
    fn keeps_children(&self, min_visits: u32) -> bool {
        self.is_expanded() && (self.visits >= min_visits || self.proof != Proof::Unknown)
    }

    /// Ids of the children.
    pub fn child_ids(&self) -> std::ops::Range<NodeId> {
        self.first..self.first + NodeId::from(self.children)
    }
}

/// The arena.
#[derive(Debug)]
pub struct Tree {
    nodes: Vec<Node>,
    capacity: usize,
}

impl Tree {
    /// An empty tree (only a root) that holds at most `hash_mb` MiB of nodes.
    pub fn new(hash_mb: usize) -> Tree {
        let capacity = Self::capacity_for(hash_mb);
        let mut tree = Tree {
            nodes: Self::arena(capacity, 1),
            capacity,
        };
        tree.clear();
        tree
    }

    /// An empty arena with room for `capacity` nodes reserved up front, or failing that (a
    /// `Hash` larger than the address space allows) for at least `needed`.
    ///
    /// Reserving the whole cap at once is what keeps `stop` fast: a `Vec` that grows by doubling
    /// copies the whole tree mid-search (measured: 10–37 ms for a 0.5 M-node tree, during which
    /// the stop flag is not looked at). The reservation costs address space only; the operating
    /// system backs pages with memory when nodes are first written, so the resident size still
    /// follows the tree's actual size.
    fn arena(capacity: usize, needed: usize) -> Vec<Node> {
        let mut nodes = Vec::new();
        if nodes.try_reserve_exact(capacity).is_err() {
            // Fall back to growing on demand (`add_children`); an allocation failure there
            // counts as a full tree.
            let _ = nodes.try_reserve_exact(needed);
        }
        nodes
    }

    /// How many nodes fit into `hash_mb` MiB (at least a few thousand, so a search can always
    /// expand the root and play).
    pub fn capacity_for(hash_mb: usize) -> usize {
        (hash_mb.saturating_mul(1 << 20) / size_of::<Node>()).clamp(4096, u32::MAX as usize - 1)
    }

    /// Maximum number of nodes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes of memory the arena holds between searches (reserved, used or not): what `Hash`
    /// bounds. `reroot` and `prune` briefly hold a second arena while they copy.
    #[cfg(test)]
    pub fn reserved_bytes(&self) -> usize {
        self.nodes.capacity() * size_of::<Node>()
    }

    /// Number of nodes in use.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree holds only an unvisited root.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 1 && self.nodes.first().is_none_or(|root| root.visits == 0)
    }

    /// Permille of the capacity in use (UCI `hashfull`).
    pub fn permille_full(&self) -> u32 {
        (self.nodes.len() as u64 * 1000 / self.capacity as u64).min(1000) as u32
    }

    /// Drops every node and starts over from a fresh root.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.nodes.push(Node::new(None, 1.0));
    }

    /// The node with id `id`.
    pub fn get(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// The children of `node` (a node of this tree), in id order from `node.first`: one
    /// bounds check for the whole block rather than one per child.
    pub fn children(&self, node: &Node) -> &[Node] {
        let first = node.first as usize;
        &self.nodes[first..first + usize::from(node.children)]
    }

    /// The node with id `id`, mutably.
    pub fn get_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id as usize]
    }

    /// Appends `children` as the child block of `parent`. Returns `false` (and changes nothing)
    /// if the arena has no room for them.
    pub fn add_children(&mut self, parent: NodeId, children: &[Node]) -> bool {
        if children.is_empty() || self.nodes.len() + children.len() > self.capacity {
            return false;
        }
        let needed = self.nodes.len() + children.len();
        if needed > self.nodes.capacity() {
            // Only reached when the up-front reservation failed (see `arena`): grow by doubling
            // up to the cap. A failed allocation (a `Hash` larger than the
            // machine's memory) counts as a full tree instead of aborting the process.
            let target = (self.nodes.capacity() * 2)
                .max(needed)
                .max(1 << 16)
                .min(self.capacity);
            if self
                .nodes
                .try_reserve_exact(target - self.nodes.len())
                .is_err()
            {
                self.capacity = self.nodes.len();
                return false;
            }
        }
        let first = self.nodes.len() as NodeId;
        self.nodes.extend_from_slice(children);
        let node = self.get_mut(parent);
        node.first = first;
        node.children = children.len() as u16;
        true
    }

    /// Makes `new_root` the root, keeping its subtree and dropping everything else.
    pub fn reroot(&mut self, new_root: NodeId) {
        if new_root == ROOT {
            return;
        }
        // The subtree goes into a new arena with the full capacity reserved (see `arena`); the
        // old one is freed when it is replaced below.
        let mut fresh = Self::arena(self.capacity, self.subtree_size(new_root));
        fresh.push(self.nodes[new_root as usize]);
        // Breadth-first copy: each copied node's child block is appended in one piece.
        let mut next = 0;
        while next < fresh.len() {
            let node = fresh[next];
            if node.is_expanded() {
                let first = fresh.len() as NodeId;
                fresh.extend_from_slice(
                    &self.nodes
                        [node.first as usize..(node.first + NodeId::from(node.children)) as usize],
                );
                fresh[next].first = first;
            }
            next += 1;
        }
        self.nodes = fresh;
    }

    /// Frees memory in a full tree: keeps the children only of nodes with at least
    /// `min_visits` visits (and of proven nodes, whose proof rests on them) and turns the other
    /// expanded nodes back into leaves. A pruned node keeps its visits, value and proof, so the
    /// search sees no change until it comes back to it and expands it again. The smallest
    /// power-of-two threshold that leaves the tree at most `target` nodes is used; returns the
    /// threshold, or `None` (and changes nothing) if even the root's children alone do not fit.
    ///
    /// Like `reroot` it copies into a fresh arena, so the memory briefly doubles.
    ///
    /// `abort` is polled every few thousand nodes (a stop request must not wait for the copy);
    /// when it says so, the tree is left as it was and `None` is returned.
    pub fn prune(&mut self, target: usize, abort: &dyn Fn() -> bool) -> Option<u32> {
        let mut min_visits = 2u32;
        loop {
            match self.pruned_size(min_visits, abort) {
                None => return None,
                Some(size) if size <= target => break,
                Some(_) => {}
            }
            if min_visits > self.get(ROOT).visits {
                return None;
            }
            min_visits = min_visits.saturating_mul(2);
        }
        let mut fresh = Self::arena(self.capacity, target);
        fresh.push(self.nodes[ROOT as usize]);
        let mut next = 0;
        while next < fresh.len() {
            if next.is_multiple_of(POLL_INTERVAL) && abort() {
                return None;
            }
            let node = fresh[next];
            if next == ROOT as usize || node.keeps_children(min_visits) {
                let first = fresh.len() as NodeId;
                fresh.extend_from_slice(
                    &self.nodes
                        [node.first as usize..(node.first + NodeId::from(node.children)) as usize],
                );
                fresh[next].first = first;
            } else {
                fresh[next].first = 0;
                fresh[next].children = 0;
            }
            next += 1;
        }
        self.nodes = fresh;
        Some(min_visits)
    }

    /// Size of the tree `prune` with `min_visits` would leave (`None` if aborted).
    fn pruned_size(&self, min_visits: u32, abort: &dyn Fn() -> bool) -> Option<usize> {
        let mut count = 1;
        let mut stack = vec![ROOT];
        let mut seen = 0usize;
        while let Some(id) = stack.pop() {
            seen += 1;
            if seen.is_multiple_of(POLL_INTERVAL) && abort() {
                return None;
            }
            let node = self.get(id);
            if id == ROOT || node.keeps_children(min_visits) {
                count += node.children as usize;
                stack.extend(node.child_ids());
            }
        }
        Some(count)
    }

    fn subtree_size(&self, id: NodeId) -> usize {
        let mut count = 1;
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            let node = self.get(id);
            count += node.children as usize;
            stack.extend(node.child_ids());
        }
        count
    }

    /// Changes the capacity (a new `Hash` value); the tree is cleared.
    pub fn resize(&mut self, hash_mb: usize) {
        self.capacity = Self::capacity_for(hash_mb);
        // Free the old arena before reserving the new one.
        self.nodes = Vec::new();
        self.nodes = Self::arena(self.capacity, 1);
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_is_small() {
        assert!(size_of::<Node>() <= 40, "{}", size_of::<Node>());
    }

    #[test]
    fn capacity_follows_hash() {
        assert!(Tree::capacity_for(64) * size_of::<Node>() <= 64 << 20);
        assert!(Tree::capacity_for(64) > 1_000_000);
        assert_eq!(Tree::capacity_for(0), 4096);
    }

    #[test]
    fn reroot_keeps_the_subtree() {
        let mut tree = Tree::new(1);
        tree.get_mut(ROOT).visits = 10;
        assert!(tree.add_children(ROOT, &[Node::new(None, 0.5), Node::new(None, 0.5)]));
        tree.get_mut(2).visits = 7;
        assert!(tree.add_children(
            2,
            &[
                Node::new(None, 0.1),
                Node::new(None, 0.2),
                Node::new(None, 0.7)
            ]
        ));
        tree.get_mut(5).visits = 3;
        assert!(tree.add_children(1, &[Node::new(None, 1.0)]));
        tree.reroot(2);
        assert_eq!(tree.len(), 4);
        let root = *tree.get(ROOT);
        assert_eq!(root.visits, 7);
        let kids: Vec<u32> = root.child_ids().map(|id| tree.get(id).visits).collect();
        assert_eq!(kids, vec![0, 0, 3]);
        assert!((tree.get(root.first + 2).prior - 0.7).abs() < 1e-6);
    }

    #[test]
    fn prune_drops_the_children_of_rarely_visited_nodes_only() {
        // root (100) -> a (90) -> [a1 (50) -> [x, y], a2 (3) -> [z]], b (3, proven) -> [w],
        // c (2) -> [v]
        let mut tree = Tree::new(1);
        tree.get_mut(ROOT).visits = 100;
        let kid = |visits: u32| Node {
            visits,
            ..Node::new(None, 0.3)
        };
        assert!(tree.add_children(ROOT, &[kid(90), kid(3), kid(2)])); // 1, 2, 3
        assert!(tree.add_children(1, &[kid(50), kid(3)])); // 4, 5
        assert!(tree.add_children(4, &[kid(30), kid(19)])); // 6, 7
        assert!(tree.add_children(5, &[kid(1)])); // 8
        tree.get_mut(2).proof = Proof::Win(3);
        assert!(tree.add_children(2, &[kid(2)])); // 9
        assert!(tree.add_children(3, &[kid(1)])); // 10
        assert_eq!(tree.len(), 11);
        let never = || false;
        // Room for everything but the one-visit leaves under a2 and c: threshold 4.
        assert_eq!(tree.prune(9, &never), Some(4));
        assert_eq!(tree.len(), 9);
        let visits = |tree: &Tree, id: NodeId| -> Vec<u32> {
            tree.get(id)
                .child_ids()
                .map(|c| tree.get(c).visits)
                .collect()
        };
        assert_eq!(visits(&tree, ROOT), vec![90, 3, 2]);
        let [a, b, c] = [1, 2, 3].map(|i| tree.get(ROOT).first + i - 1);
        assert_eq!(visits(&tree, a), vec![50, 3]);
        assert_eq!(
            visits(&tree, b),
            vec![2],
            "a proven node keeps its children"
        );
        assert!(!tree.get(c).is_expanded());
        let a2 = tree.get(a).first + 1;
        assert!(!tree.get(a2).is_expanded());
        assert_eq!(tree.get(a2).visits, 3, "a pruned node keeps its statistics");
        assert_eq!(visits(&tree, tree.get(a).first), vec![30, 19]);
        // Nothing fits under the root's own children: unchanged.
        assert_eq!(tree.prune(3, &never), None);
        assert_eq!(tree.len(), 9);
        // An abort leaves the tree as it was.
        assert_eq!(tree.prune(5, &|| true), None);
        assert_eq!(tree.len(), 9);
    }

    #[test]
    fn arena_never_moves_while_filling() {
        // Growing by doubling copied the whole tree mid-search, and `stop` waited for the copy:
        // the arena is reserved in full up front (also after `reroot` and `resize`).
        let mut tree = Tree::new(1);
        tree.resize(8);
        let block = vec![Node::new(None, 0.0); 200];
        let check = |tree: &mut Tree| {
            let start = tree.nodes.as_ptr();
            let mut parent = ROOT;
            while tree.add_children(parent, &block) {
                parent = tree.get(parent).first;
            }
            assert!(tree.len() + block.len() > tree.capacity());
            assert_eq!(tree.nodes.as_ptr(), start, "the arena was reallocated");
        };
        check(&mut tree);
        let child = tree.get(ROOT).first;
        tree.reroot(child);
        check(&mut tree);
    }

    #[test]
    fn full_arena_refuses_children() {
        let mut tree = Tree::new(0);
        let block = vec![Node::new(None, 0.0); 4095];
        assert!(tree.add_children(ROOT, &block));
        assert!(!tree.add_children(1, &[Node::new(None, 0.0)]));
        assert_eq!(tree.len(), 4096);
    }
}
