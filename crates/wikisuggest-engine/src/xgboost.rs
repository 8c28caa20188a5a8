//! Evaluator for XGBoost `binary:logistic` gbtree models saved as JSON.
//!
//! It reproduces `XGBClassifier.predict_proba` of XGBoost 2.1.4 bit for bit:
//! float32 features, float32 base margin `-logf(1/base_score - 1)`, trees walked with
//! XGBoost's numerical, categorical and missing-value rules, leaf values added to the
//! margin in tree order in float32, and XGBoost's float32 sigmoid. Only the trees of the
//! sklearn wrapper's iteration range are kept (all, or `[0, best_iteration]`).
//!
//! The model is held in a compact array form ([`LinkModel`]) that can also be written to
//! and read from bytes, for the native dataset format.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{Error, Result};

/// Number of model inputs of the link model.
pub const NUM_FEATURES: usize = 7;

/// Rows evaluated together by [`LinkModel::predict_batch_into`]: independent tree walks
/// interleaved so their memory loads overlap.
const BLOCK: usize = 8;
const FLAG_DEFAULT_LEFT: u8 = 1;
const FLAG_CATEGORICAL: u8 = 2;

/// XGBoost treats categories at or above 2^24 (not exactly representable as float) as
/// invalid, which sends the row left.
const MAX_CATEGORY: f32 = 16_777_216.0;

/// One tree node. Children are absolute indices into [`LinkModel::nodes`].
///
/// A leaf is its own left and right child. Walking a tree is then a fixed number of
/// branch-free steps (the tree's depth): a row that reaches a leaf early stays there.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    /// Left child (the node itself for a leaf).
    left: u32,
    right: u32,
    /// Split threshold, or the leaf value.
    value: f32,
    /// Feature index (< [`NUM_FEATURES`]).
    feature: u8,
    flags: u8,
    /// For categorical splits: the node's category set is `cats[cat_start..cat_start + cat_len]`.
    cat_start: u32,
    cat_len: u32,
}

/// A validated binary-logistic tree ensemble.
///
/// Immutable and `Send + Sync`; evaluation allocates nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkModel {
    base_score: f32,
    base_margin: f32,
    /// Root node index of each tree, in evaluation order.
    roots: Vec<u32>,
    /// Depth (steps from the root to the deepest leaf) of each tree; derived, not stored.
    depths: Vec<u32>,
    nodes: Vec<Node>,
    /// Sorted category sets of the categorical nodes.
    cats: Vec<u32>,
    /// The trees as complete trees, when the model allows; derived, not stored.
    complete: Option<Complete>,
}

/// The deepest trees still laid out as [`Complete`] trees: `2^depth` leaves per tree.
const MAX_COMPLETE_DEPTH: u32 = 10;

/// The trees again, each as a complete binary tree of the deepest tree's depth in
/// breadth-first order: a step computes its child's index (`2i + 1` or `2i + 2`) from the
/// decision instead of loading it, and every tree takes the same number of steps. A leaf
/// above the last level becomes a split whose every leaf below holds its value, so either
/// way leads to the same value. Built when no split is categorical and the trees are at
/// most [`MAX_COMPLETE_DEPTH`] deep; the decisions and the order of the additions are
/// those of the nodes, so predictions are identical.
#[derive(Debug, Clone, PartialEq)]
struct Complete {
    depth: u32,
    /// Number of trees.
    trees: usize,
    /// The splits of each block of [`BLOCK`] trees (the last block padded), interleaved:
    /// position `p` of the block's tree `k` at `p * BLOCK + k`, `2^depth - 1` positions.
    splits: Vec<Split>,
    /// The leaf values of each block, interleaved in the same way, `2^depth` positions.
    leaves: Vec<f32>,
}

/// A numerical split of a [`Complete`] tree.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Split {
    threshold: f32,
    feature: u8,
    default_left: bool,
}

impl Complete {
    /// The complete form of `model`'s trees (`depths` their depths), if it has one.
    fn of(model: &LinkModel, depths: &[u32]) -> Option<Self> {
        if model.nodes.iter().any(|n| n.flags & FLAG_CATEGORICAL != 0) {
            return None;
        }
        let depth = depths.iter().copied().max().unwrap_or(0);
        if depth > MAX_COMPLETE_DEPTH {
            return None;
        }
        let n_splits = (1usize << depth) - 1;
        let blocks = model.roots.len().div_ceil(BLOCK);
        let pass = Split {
            threshold: 0.0,
            feature: 0,
            default_left: true,
        };
        let mut complete = Self {
            depth,
            trees: model.roots.len(),
            splits: vec![pass; blocks * BLOCK * n_splits],
            leaves: vec![0.0; blocks * BLOCK * (n_splits + 1)],
        };
        for (tree, &root) in model.roots.iter().enumerate() {
            let (block, k) = (tree / BLOCK, tree % BLOCK);
            let splits = block * BLOCK * n_splits;
            let leaves = block * BLOCK * (n_splits + 1);
            // (node, position in breadth-first order, level): validated nodes only.
            let mut stack = vec![(root, 0usize, 0u32)];
            while let Some((i, position, level)) = stack.pop() {
                let node = model.nodes.get(i as usize)?;
                if level == depth {
                    let at = leaves + (position - n_splits) * BLOCK + k;
                    *complete.leaves.get_mut(at)? = node.value;
                    continue;
                }
                let is_leaf = node.left == i;
                if !is_leaf {
                    *complete.splits.get_mut(splits + position * BLOCK + k)? = Split {
                        threshold: node.value,
                        feature: node.feature,
                        default_left: node.flags & FLAG_DEFAULT_LEFT != 0,
                    };
                }
                stack.push((node.left, 2 * position + 1, level + 1));
                stack.push((node.right, 2 * position + 2, level + 1));
            }
        }
        Some(complete)
    }

    /// The margin of `row`: [`LinkModel::predict_margin`] over the complete trees.
    #[inline]
    fn margin(&self, base_margin: f32, row: &[f32; NUM_FEATURES]) -> f32 {
        // Features are below 8 (validated): a masked index needs no bounds check.
        let mut padded = [0.0f32; 8];
        for (slot, &v) in padded.iter_mut().zip(row) {
            *slot = v;
        }
        let n_splits = (1usize << self.depth) - 1;
        let mut margin = base_margin;
        for (block, leaves) in self.leaves.chunks(BLOCK * (n_splits + 1)).enumerate() {
            let at = block * BLOCK * n_splits;
            let splits = self
                .splits
                .get(at..at + BLOCK * n_splits)
                .unwrap_or_default();
            // The block's trees in lockstep (independent chains of loads overlap).
            let mut idx = [0usize; BLOCK];
            for _ in 0..self.depth {
                for (k, i) in idx.iter_mut().enumerate() {
                    let Some(split) = splits.get(*i * BLOCK + k) else {
                        continue;
                    };
                    let v = padded[usize::from(split.feature) & 7];
                    // As `step`: NaN follows the default direction.
                    let left = (v < split.threshold) | (v.is_nan() & split.default_left);
                    *i = 2 * *i + 2 - usize::from(left);
                }
            }
            // The leaves in tree order; a padded block's extra trees are left out.
            let trees = self.trees.saturating_sub(block * BLOCK).min(BLOCK);
            for (k, &i) in idx.iter().enumerate().take(trees) {
                let leaf = (i - n_splits) * BLOCK + k;
                margin += leaves.get(leaf).copied().unwrap_or(0.0);
            }
        }
        margin
    }
}

fn model_err(msg: impl Into<String>) -> Error {
    Error::Model(msg.into())
}

// ---------------------------------------------------------------------------------------
// JSON schema (only the fields evaluation needs).

#[derive(Deserialize)]
struct ModelJson<'a> {
    #[serde(borrow)]
    learner: LearnerJson<'a>,
}

#[derive(Deserialize)]
struct LearnerJson<'a> {
    #[serde(default)]
    attributes: HashMap<String, String>,
    #[serde(borrow)]
    gradient_booster: BoosterJson<'a>,
    learner_model_param: LearnerParamJson,
    objective: ObjectiveJson,
}

#[derive(Deserialize)]
struct BoosterJson<'a> {
    name: String,
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct LearnerParamJson {
    base_score: String,
    #[serde(default)]
    num_class: Option<String>,
    #[serde(default)]
    num_feature: Option<String>,
    #[serde(default)]
    num_target: Option<String>,
}

#[derive(Deserialize)]
struct ObjectiveJson {
    name: String,
}

#[derive(Deserialize)]
struct GbtreeJson<'a> {
    gbtree_model_param: GbtreeParamJson,
    #[serde(default)]
    iteration_indptr: Vec<u64>,
    #[serde(default)]
    tree_info: Vec<i64>,
    #[serde(borrow)]
    trees: Vec<TreeJson<'a>>,
}

#[derive(Deserialize)]
struct GbtreeParamJson {
    num_parallel_tree: String,
    num_trees: String,
}

#[derive(Deserialize)]
struct TreeJson<'a> {
    tree_param: TreeParamJson,
    left_children: Vec<i64>,
    right_children: Vec<i64>,
    split_indices: Vec<i64>,
    /// Kept as raw text so each number is parsed straight to float32, as XGBoost does
    /// (decimal → f64 → f32 could double-round).
    #[serde(borrow)]
    split_conditions: Vec<&'a RawValue>,
    default_left: Vec<BoolOrInt>,
    #[serde(default)]
    split_type: Vec<i64>,
    #[serde(default)]
    categories: Vec<i64>,
    #[serde(default)]
    categories_nodes: Vec<i64>,
    #[serde(default)]
    categories_segments: Vec<u64>,
    #[serde(default)]
    categories_sizes: Vec<u64>,
}

#[derive(Deserialize)]
struct TreeParamJson {
    num_nodes: String,
    #[serde(default)]
    size_leaf_vector: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum BoolOrInt {
    Bool(bool),
    Int(i64),
}

impl BoolOrInt {
    fn get(&self) -> bool {
        match self {
            BoolOrInt::Bool(b) => *b,
            BoolOrInt::Int(i) => *i != 0,
        }
    }
}

/// XGBoost writes non-finite floats as bare `NaN`, `Infinity` and `-Infinity` (e.g. the
/// split condition of categorical nodes), which is not JSON. Quote them, outside string
/// literals, so a standard parser accepts the document; number fields that may hold
/// them are parsed from their raw text.
fn quote_non_finite(json: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    const TOKENS: [&[u8]; 3] = [b"-Infinity", b"Infinity", b"NaN"];
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut escaped = false;
    let mut i = 0;
    while i < json.len() {
        let b = json[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if let Some(tok) = TOKENS.iter().find(|t| json[i..].starts_with(t)) {
            let buf = out.get_or_insert_with(|| json[..i].to_vec());
            buf.push(b'"');
            buf.extend_from_slice(tok);
            buf.push(b'"');
            i += tok.len();
            continue;
        }
        if let Some(buf) = out.as_mut() {
            buf.push(b);
        }
        i += 1;
    }
    match out {
        Some(buf) => std::borrow::Cow::Owned(buf),
        None => std::borrow::Cow::Borrowed(json),
    }
}

fn parse_usize(field: &str, s: &str) -> Result<usize> {
    s.trim()
        .parse()
        .map_err(|_| model_err(format!("{field} is not a non-negative integer: {s:?}")))
}

// ---------------------------------------------------------------------------------------

impl LinkModel {
    /// Loads a model from XGBoost's JSON format (`XGBClassifier.save_model`).
    ///
    /// Refuses anything but a single-target `binary:logistic` gbtree model with
    /// [`NUM_FEATURES`] inputs.
    pub fn from_json(json: &[u8]) -> Result<Self> {
        let json = quote_non_finite(json);
        let doc: ModelJson<'_> = serde_json::from_slice(&json)
            .map_err(|e| model_err(format!("invalid model JSON: {e}")))?;
        let learner = doc.learner;
        if learner.objective.name != "binary:logistic" {
            return Err(model_err(format!(
                "unsupported objective {:?} (only binary:logistic)",
                learner.objective.name
            )));
        }
        if learner.gradient_booster.name != "gbtree" {
            return Err(model_err(format!(
                "unsupported booster {:?} (only gbtree)",
                learner.gradient_booster.name
            )));
        }
        let param = &learner.learner_model_param;
        let num_class = param
            .num_class
            .as_deref()
            .map(|n| parse_usize("num_class", n))
            .transpose()?;
        if num_class.is_some_and(|n| n > 1) {
            return Err(model_err("multi-class models are not supported"));
        }
        let num_target = param
            .num_target
            .as_deref()
            .map(|n| parse_usize("num_target", n))
            .transpose()?;
        if num_target.is_some_and(|n| n > 1) {
            return Err(model_err("multi-target models are not supported"));
        }
        let num_feature = param
            .num_feature
            .as_deref()
            .map(|n| parse_usize("num_feature", n))
            .transpose()?;
        if num_feature.is_some_and(|n| n != NUM_FEATURES) {
            return Err(model_err(format!(
                "model has {} features, the link model needs {NUM_FEATURES}",
                num_feature.unwrap_or(0)
            )));
        }
        let base_score: f32 = param
            .base_score
            .trim()
            .parse()
            .map_err(|_| model_err(format!("invalid base_score {:?}", param.base_score)))?;
        let raw = learner
            .gradient_booster
            .model
            .ok_or_else(|| model_err("gbtree without a model"))?;
        let gbtree: GbtreeJson<'_> = serde_json::from_str(raw.get())
            .map_err(|e| model_err(format!("invalid gbtree model: {e}")))?;

        let range = tree_range(&learner.attributes, &gbtree)?;
        let mut builder = Builder::default();
        for (i, tree) in gbtree.trees[range].iter().enumerate() {
            builder
                .add_tree(tree)
                .map_err(|e| model_err(format!("tree {i}: {e}")))?;
        }
        Self::new(base_score, builder.roots, builder.nodes, builder.cats)
    }

    fn new(base_score: f32, roots: Vec<u32>, nodes: Vec<Node>, cats: Vec<u32>) -> Result<Self> {
        // XGBoost 2.1.4 rejects these too ("base_score must be in (0,1) for logistic loss").
        if !(base_score > 0.0 && base_score < 1.0) {
            return Err(model_err(format!("base_score {base_score} outside (0, 1)")));
        }
        let base_margin = -(1.0f32 / base_score - 1.0f32).ln();
        let mut model = Self {
            base_score,
            base_margin,
            roots,
            depths: Vec::new(),
            nodes,
            cats,
            complete: None,
        };
        model.depths = model.validate()?;
        model.complete = Complete::of(&model, &model.depths);
        Ok(model)
    }

    /// Checks every invariant evaluation relies on: children and category ranges in
    /// bounds, feature indices below [`NUM_FEATURES`], and every tree a tree (no node
    /// reachable twice, hence no cycle). Returns each tree's depth.
    fn validate(&self) -> Result<Vec<u32>> {
        let n = self.nodes.len();
        let mut seen = vec![false; n];
        let mut stack = Vec::new();
        let mut depths = Vec::with_capacity(self.roots.len());
        for &root in &self.roots {
            let mut depth = 0u32;
            stack.push((root, 0u32));
            while let Some((i, d)) = stack.pop() {
                let node = self
                    .nodes
                    .get(i as usize)
                    .ok_or_else(|| model_err("child out of range"))?;
                if std::mem::replace(&mut seen[i as usize], true) {
                    return Err(model_err("node reachable twice (not a tree)"));
                }
                // Checked for leaves too: `step` reads the feature and flags of every node.
                if usize::from(node.feature) >= NUM_FEATURES {
                    return Err(model_err(format!(
                        "split on feature {} (model input has {NUM_FEATURES})",
                        node.feature
                    )));
                }
                if node.flags & FLAG_CATEGORICAL != 0 {
                    let end = u64::from(node.cat_start) + u64::from(node.cat_len);
                    if end > self.cats.len() as u64 {
                        return Err(model_err("category set out of range"));
                    }
                }
                if node.left == i || node.right == i {
                    if node.left != node.right {
                        return Err(model_err("half-leaf node"));
                    }
                    depth = depth.max(d);
                    continue;
                }
                stack.push((node.left, d + 1));
                stack.push((node.right, d + 1));
            }
            depths.push(depth);
        }
        Ok(depths)
    }

    /// The model's `base_score` (a probability).
    pub fn base_score(&self) -> f32 {
        self.base_score
    }

    /// Number of trees evaluated.
    pub fn num_trees(&self) -> usize {
        self.roots.len()
    }

    /// Total number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The raw score (log-odds) of one row, before the sigmoid.
    #[inline]
    pub fn predict_margin(&self, row: &[f32; NUM_FEATURES]) -> f32 {
        if let Some(complete) = &self.complete {
            return complete.margin(self.base_margin, row);
        }
        let mut margin = self.base_margin;
        // Walk BLOCK trees in lockstep (independent chains of loads overlap), then add
        // their leaves in tree order: XGBoost adds leaf values to the margin one by one,
        // in float32, so the order of the additions is kept.
        for (roots, depths) in self.roots.chunks(BLOCK).zip(self.depths.chunks(BLOCK)) {
            let mut idx = [0u32; BLOCK];
            idx[..roots.len()].copy_from_slice(roots);
            let steps = depths.iter().copied().max().unwrap_or(0);
            for _ in 0..steps {
                for i in &mut idx[..roots.len()] {
                    *i = self.step(*i, row);
                }
            }
            for &i in &idx[..roots.len()] {
                margin += self.nodes[i as usize].value;
            }
        }
        margin
    }

    /// The probability of the positive class for one row, as `predict_proba(...)[:, 1]`.
    #[inline]
    pub fn predict(&self, row: &[f32; NUM_FEATURES]) -> f32 {
        sigmoid(self.predict_margin(row))
    }

    /// [`predict`](Self::predict) for many rows.
    pub fn predict_batch(&self, rows: &[[f32; NUM_FEATURES]]) -> Vec<f32> {
        let mut out = vec![0.0; rows.len()];
        self.predict_batch_into(rows, &mut out);
        out
    }

    /// [`predict`](Self::predict) for many rows into `out` (extra slots are left as is).
    ///
    /// Results are identical to row-by-row prediction: each row's margin is still summed
    /// in tree order; only independent rows are interleaved.
    pub fn predict_batch_into(&self, rows: &[[f32; NUM_FEATURES]], out: &mut [f32]) {
        let n = rows.len().min(out.len());
        let (rows, out) = (&rows[..n], &mut out[..n]);
        let mut row_blocks = rows.chunks_exact(BLOCK);
        let mut out_blocks = out.chunks_exact_mut(BLOCK);
        for (block, dst) in (&mut row_blocks).zip(&mut out_blocks) {
            let mut margin = [self.base_margin; BLOCK];
            for (&root, &depth) in self.roots.iter().zip(&self.depths) {
                let mut idx = [root; BLOCK];
                for _ in 0..depth {
                    for (i, row) in idx.iter_mut().zip(block) {
                        *i = self.step(*i, row);
                    }
                }
                for (m, &i) in margin.iter_mut().zip(&idx) {
                    *m += self.nodes[i as usize].value;
                }
            }
            for (d, m) in dst.iter_mut().zip(margin) {
                *d = sigmoid(m);
            }
        }
        for (row, p) in row_blocks
            .remainder()
            .iter()
            .zip(out_blocks.into_remainder())
        {
            *p = self.predict(row);
        }
    }

    /// One step down from node `i` (a leaf steps to itself).
    #[inline(always)]
    fn step(&self, i: u32, row: &[f32; NUM_FEATURES]) -> u32 {
        let node = &self.nodes[i as usize];
        let v = row[usize::from(node.feature)];
        let default_left = node.flags & FLAG_DEFAULT_LEFT != 0;
        // Missing (NaN) values follow the default direction; `v < threshold` is false
        // for NaN, so this needs no branch.
        let mut go_left = (v < node.value) | (v.is_nan() & default_left);
        if node.flags & FLAG_CATEGORICAL != 0 {
            go_left = if v.is_nan() {
                default_left
            } else {
                !self.in_category_set(node, v)
            };
        }
        if go_left { node.left } else { node.right }
    }

    /// XGBoost's categorical decision: the row goes right iff the value is a valid
    /// category (0 ≤ v < 2^24, truncated to an integer) listed in the node's set.
    #[inline]
    fn in_category_set(&self, node: &Node, v: f32) -> bool {
        if !(0.0..MAX_CATEGORY).contains(&v) {
            return false;
        }
        let cat = v as u32;
        let start = node.cat_start as usize;
        self.cats[start..start + node.cat_len as usize]
            .binary_search(&cat)
            .is_ok()
    }
}

/// XGBoost's float32 logistic transform (`common::Sigmoid` in 2.1.4).
#[inline]
pub fn sigmoid(margin: f32) -> f32 {
    let neg = -margin;
    // `std::min(-x, 88.7f)`: returns `-x` when the comparison is false (also for NaN).
    let x = if 88.7f32 < neg { 88.7f32 } else { neg };
    1.0f32 / (x.exp() + 1.0f32 + 1e-16f32)
}

/// The trees `predict_proba` uses: all, or those of iterations `[0, best_iteration]`
/// when early stopping recorded `best_iteration` (the sklearn wrapper applies it).
fn tree_range(
    attributes: &HashMap<String, String>,
    gbtree: &GbtreeJson<'_>,
) -> Result<std::ops::Range<usize>> {
    let num_trees = parse_usize("num_trees", &gbtree.gbtree_model_param.num_trees)?;
    let per_iter = parse_usize(
        "num_parallel_tree",
        &gbtree.gbtree_model_param.num_parallel_tree,
    )?;
    if num_trees != gbtree.trees.len() {
        return Err(model_err(format!(
            "num_trees is {num_trees} but {} trees are stored",
            gbtree.trees.len()
        )));
    }
    if gbtree.tree_info.iter().any(|&g| g != 0) {
        return Err(model_err("trees of more than one output group"));
    }
    // The iteration → tree boundaries; older files lack them and use num_parallel_tree.
    let indptr: Vec<usize> = if gbtree.iteration_indptr.is_empty() {
        if per_iter == 0 || num_trees % per_iter != 0 {
            return Err(model_err(
                "num_trees is not a multiple of num_parallel_tree",
            ));
        }
        (0..=num_trees / per_iter).map(|i| i * per_iter).collect()
    } else {
        gbtree
            .iteration_indptr
            .iter()
            .map(|&i| i as usize)
            .collect()
    };
    if indptr.first() != Some(&0)
        || indptr.last() != Some(&num_trees)
        || indptr.windows(2).any(|w| w[0] > w[1])
    {
        return Err(model_err("inconsistent iteration_indptr"));
    }
    let iterations = indptr.len() - 1;
    let end_iter = match attributes.get("best_iteration") {
        None => iterations,
        Some(s) => {
            let best = parse_usize("best_iteration", s)?;
            if best >= iterations {
                return Err(model_err(format!(
                    "best_iteration {best} but only {iterations} iterations"
                )));
            }
            best + 1
        }
    };
    Ok(0..indptr[end_iter])
}

#[derive(Default)]
struct Builder {
    roots: Vec<u32>,
    nodes: Vec<Node>,
    cats: Vec<u32>,
}

impl Builder {
    fn add_tree(&mut self, t: &TreeJson<'_>) -> Result<(), String> {
        let n = t
            .tree_param
            .num_nodes
            .trim()
            .parse::<usize>()
            .map_err(|_| "invalid num_nodes")?;
        let leaf_vector = t.tree_param.size_leaf_vector.as_deref().map(str::trim);
        if leaf_vector.is_some_and(|s| !matches!(s, "0" | "1")) {
            return Err("vector leaves are not supported".into());
        }
        let lens = [
            t.left_children.len(),
            t.right_children.len(),
            t.split_indices.len(),
            t.split_conditions.len(),
            t.default_left.len(),
        ];
        if n == 0
            || lens.iter().any(|&l| l != n)
            || !(t.split_type.is_empty() || t.split_type.len() == n)
        {
            return Err(format!(
                "node arrays do not all have num_nodes = {n} entries"
            ));
        }
        let offset = self.nodes.len();
        let total = offset + n;
        if total >= u32::MAX as usize {
            return Err("too many nodes".into());
        }

        // Category sets, by node.
        let k = t.categories_nodes.len();
        if t.categories_segments.len() != k || t.categories_sizes.len() != k {
            return Err("categories_* arrays differ in length".into());
        }
        let mut cat_sets: HashMap<usize, (u32, u32)> = HashMap::new();
        for j in 0..k {
            let node = usize::try_from(t.categories_nodes[j])
                .ok()
                .filter(|&x| x < n)
                .ok_or("categories_nodes entry out of range")?;
            let seg = t.categories_segments[j] as usize;
            let size = t.categories_sizes[j] as usize;
            let list = seg
                .checked_add(size)
                .and_then(|end| t.categories.get(seg..end))
                .ok_or("category segment out of range")?;
            let mut list = list
                .iter()
                .map(|&c| u32::try_from(c).map_err(|_| "negative category"))
                .collect::<Result<Vec<u32>, _>>()?;
            list.sort_unstable();
            list.dedup();
            let start = u32::try_from(self.cats.len()).map_err(|_| "too many categories")?;
            let len = u32::try_from(list.len()).map_err(|_| "too many categories")?;
            self.cats.extend(list);
            cat_sets.insert(node, (start, len));
        }

        for i in 0..n {
            let value: f32 = t.split_conditions[i]
                .get()
                .trim()
                .trim_matches('"')
                .parse()
                .map_err(|_| format!("node {i}: split condition is not a number"))?;
            let left = t.left_children[i];
            let node = if left == -1 {
                let me = (i + offset) as u32;
                Node {
                    left: me,
                    right: me,
                    value,
                    feature: 0,
                    flags: 0,
                    cat_start: 0,
                    cat_len: 0,
                }
            } else {
                let child = |c: i64| {
                    usize::try_from(c)
                        .ok()
                        .filter(|&c| c < n)
                        .map(|c| (c + offset) as u32)
                        .ok_or(format!("node {i}: child {c} out of range"))
                };
                let feature = u8::try_from(t.split_indices[i])
                    .ok()
                    .filter(|&f| usize::from(f) < NUM_FEATURES)
                    .ok_or(format!("node {i}: split feature out of range"))?;
                let mut flags = if t.default_left[i].get() {
                    FLAG_DEFAULT_LEFT
                } else {
                    0
                };
                let (mut cat_start, mut cat_len) = (0, 0);
                match t.split_type.get(i).copied().unwrap_or(0) {
                    0 => {}
                    1 => {
                        flags |= FLAG_CATEGORICAL;
                        (cat_start, cat_len) = *cat_sets
                            .get(&i)
                            .ok_or(format!("node {i}: categorical split without categories"))?;
                    }
                    other => return Err(format!("node {i}: unknown split_type {other}")),
                }
                Node {
                    left: child(left)?,
                    right: child(t.right_children[i])?,
                    value,
                    feature,
                    flags,
                    cat_start,
                    cat_len,
                }
            };
            self.nodes.push(node);
        }
        self.roots.push(offset as u32);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Compact binary form (a section of the native dataset format).
//
// Layout, all little-endian:
//   magic "XGBM", version u32, base_score f32 bits, n_roots u32, n_nodes u32, n_cats u32,
//   roots: n_roots × u32,
//   nodes: n_nodes × { left u32, right u32, value f32 bits, cat_start u32, cat_len u32,
//                      feature u8, flags u8, pad u16 },
//   cats: n_cats × u32.

const MODEL_MAGIC: &[u8; 4] = b"XGBM";
const MODEL_VERSION: u32 = 1;
const NODE_BYTES: usize = 24;

impl LinkModel {
    /// Serialises the compact form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            24 + 4 * self.roots.len() + NODE_BYTES * self.nodes.len() + 4 * self.cats.len(),
        );
        out.extend_from_slice(MODEL_MAGIC);
        for v in [
            MODEL_VERSION,
            self.base_score.to_bits(),
            self.roots.len() as u32,
            self.nodes.len() as u32,
            self.cats.len() as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for r in &self.roots {
            out.extend_from_slice(&r.to_le_bytes());
        }
        for n in &self.nodes {
            for v in [n.left, n.right, n.value.to_bits(), n.cat_start, n.cat_len] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&[n.feature, n.flags, 0, 0]);
        }
        for c in &self.cats {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out
    }

    /// Reads the compact form, validating it like a freshly parsed model.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let corrupt = || model_err("corrupt compact model");
        let mut words = U32Reader { bytes, pos: 0 };
        if bytes.get(..4) != Some(&MODEL_MAGIC[..]) {
            return Err(corrupt());
        }
        words.pos = 4;
        if words.next().ok_or_else(corrupt)? != MODEL_VERSION {
            return Err(model_err("unsupported compact model version"));
        }
        let base_score = f32::from_bits(words.next().ok_or_else(corrupt)?);
        let n_roots = words.next().ok_or_else(corrupt)? as usize;
        let n_nodes = words.next().ok_or_else(corrupt)? as usize;
        let n_cats = words.next().ok_or_else(corrupt)? as usize;
        let expected =
            24u64 + 4 * n_roots as u64 + NODE_BYTES as u64 * n_nodes as u64 + 4 * n_cats as u64;
        if expected != bytes.len() as u64 {
            return Err(corrupt());
        }
        let roots = (0..n_roots)
            .map(|_| words.next())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(corrupt)?;
        let mut nodes = Vec::with_capacity(n_nodes);
        for _ in 0..n_nodes {
            let w: [u32; 5] = [
                words.next().ok_or_else(corrupt)?,
                words.next().ok_or_else(corrupt)?,
                words.next().ok_or_else(corrupt)?,
                words.next().ok_or_else(corrupt)?,
                words.next().ok_or_else(corrupt)?,
            ];
            let tail = words.next().ok_or_else(corrupt)?.to_le_bytes();
            nodes.push(Node {
                left: w[0],
                right: w[1],
                value: f32::from_bits(w[2]),
                cat_start: w[3],
                cat_len: w[4],
                feature: tail[0],
                flags: tail[1],
            });
        }
        let cats = (0..n_cats)
            .map(|_| words.next())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(corrupt)?;
        // Category sets must be sorted for the binary search.
        for n in &nodes {
            if n.flags & FLAG_CATEGORICAL != 0 {
                let s = n.cat_start as usize;
                let unsorted = cats
                    .get(s..s.saturating_add(n.cat_len as usize))
                    .is_some_and(|set| set.windows(2).any(|w| w[0] >= w[1]));
                if unsorted {
                    return Err(corrupt());
                }
            }
        }
        Self::new(base_score, roots, nodes, cats)
    }
}

struct U32Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl U32Reader<'_> {
    fn next(&mut self) -> Option<u32> {
        let b = self.bytes.get(self.pos..self.pos + 4)?;
        self.pos += 4;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_tokens_are_quoted_outside_strings() {
        let doc = br#"{"a":[NaN,-Infinity,1E0,Infinity],"NaN":"x\"NaN"}"#;
        let fixed = quote_non_finite(doc);
        assert_eq!(
            &fixed[..],
            &br#"{"a":["NaN","-Infinity",1E0,"Infinity"],"NaN":"x\"NaN"}"#[..]
        );
        assert!(matches!(
            quote_non_finite(b"[1]"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    /// Walking the complete trees gives the margins of walking the nodes, bit for bit,
    /// with leaves above the last level, trees of different depths and missing values.
    #[test]
    fn complete_trees_walk_as_the_nodes() {
        let split = |left: u32, feature: u8, value: f32, default_left: bool| Node {
            left,
            right: left + 1,
            value,
            feature,
            flags: u8::from(default_left) * FLAG_DEFAULT_LEFT,
            cat_start: 0,
            cat_len: 0,
        };
        let leaf = |i: u32, value: f32| Node {
            left: i,
            right: i,
            value,
            feature: 0,
            flags: 0,
            cat_start: 0,
            cat_len: 0,
        };
        let nodes = vec![
            // Tree 0, depth 3, with a leaf at depth 1.
            split(1, 0, 0.5, true),
            leaf(1, 0.25),
            split(3, 3, -1.0, false),
            leaf(3, -0.75),
            split(5, 5, 0.125, true),
            leaf(5, 1.5),
            leaf(6, -2.0),
            // Tree 1, a single leaf.
            leaf(7, 0.0625),
            // Tree 2, depth 1.
            split(9, 1, 3.0, false),
            leaf(9, -0.5),
            leaf(10, 0.5),
        ];
        let model = LinkModel::new(0.5, vec![0, 7, 8], nodes, vec![]).unwrap();
        let mut nodes_only = model.clone();
        nodes_only.complete = None;
        assert!(model.complete.is_some());
        let values = [
            f32::NAN,
            -3.0,
            -1.0,
            0.0,
            0.125,
            0.5,
            1.0,
            3.0,
            f32::INFINITY,
        ];
        for a in values {
            for b in values {
                for c in values {
                    let row = [a, b, 0.0, c, 1.0, b, 0.0];
                    assert_eq!(
                        model.predict_margin(&row).to_bits(),
                        nodes_only.predict_margin(&row).to_bits(),
                        "{row:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn sigmoid_matches_reference_formula() {
        assert_eq!(sigmoid(0.0), 0.5);
        // Saturation: exp(88.7) is finite in f32, so the result is tiny but not zero.
        assert!(sigmoid(-1000.0) > 0.0);
        assert_eq!(sigmoid(1000.0), 1.0);
        assert!(sigmoid(f32::NAN).is_nan());
    }
}
