//! Title embeddings for the `w2vfiltered` dataset (the `w2v` feature is the cosine of the
//! page's and the candidate's vectors).
//!
//! Production trains wikipedia2vec on the whole dump. Two lighter sources are offered:
//!
//! * [`WordVectors`]: the mean of pre-trained word vectors (e.g. GloVe) of the title's
//!   words. Semantic, independent of the links being predicted, and defined for any
//!   title whose words are known, including pages that are not in the dump.
//! * [`link_graph_vectors`]: random indexing of the link graph. Each title gets a fixed
//!   pseudo-random vector, and its embedding is the sum of its own and its link
//!   neighbours' (in both directions). Needs no download and works for any language,
//!   but it encodes the links themselves, so it favours targets the page already links.

use std::collections::HashMap;

use wikisuggest_text::MwTokenizer;
use wikisuggest_text::pyunicode;

use crate::error::{BuildError, Result};

/// Pre-trained word vectors of one dimension.
#[derive(Debug, Clone, Default)]
pub struct WordVectors {
    dim: usize,
    index: HashMap<String, usize>,
    data: Vec<f32>,
}

impl WordVectors {
    /// Vectors for `words`, row-major in `data` (`words.len() × dim`). The first
    /// occurrence of a repeated word wins.
    pub fn new(words: Vec<String>, dim: usize, data: Vec<f32>) -> Result<Self> {
        if dim == 0 || data.len() != words.len() * dim {
            return Err(BuildError::InvalidArgument(format!(
                "{} word vectors of dimension {dim} need {} values, got {}",
                words.len(),
                words.len() * dim,
                data.len()
            )));
        }
        let mut index = HashMap::with_capacity(words.len());
        for (i, w) in words.into_iter().enumerate() {
            index.entry(w).or_insert(i);
        }
        Ok(Self { dim, index, data })
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Mean vector of the title's known words (lowercased, tokenized like article text,
    /// punctuation and spaces dropped), or `None` if no word is known.
    pub fn title_vector(&self, title: &str, tokenizer: &MwTokenizer) -> Option<Vec<f32>> {
        let lower = pyunicode::lower(title);
        let mut sum = vec![0f32; self.dim];
        let mut known = 0u32;
        for word in tokenizer.words(&lower) {
            if !word.chars().any(pyunicode::is_alnum) {
                continue;
            }
            let Some(&row) = self.index.get(word.as_ref()) else {
                continue;
            };
            let Some(v) = self.data.get(row * self.dim..(row + 1) * self.dim) else {
                continue;
            };
            for (s, x) in sum.iter_mut().zip(v) {
                *s += x;
            }
            known += 1;
        }
        if known == 0 {
            return None;
        }
        let n = known as f32;
        Some(sum.into_iter().map(|s| s / n).collect())
    }
}

/// Random-indexing embedding of a link graph over `n` titles named by `title_of`: the
/// vectors row after row (`n × dim`), title `t` at `t * dim`.
///
/// `edges` are `(source, target)` title ids. Each title's base vector is derived from a
/// hash of its text and `seed` only, so the result does not depend on id assignment.
/// One contiguous buffer per matrix: a `Vec` per title would add a pointer, a length,
/// a capacity and an allocation to every 200-byte row.
pub fn link_graph_vectors(
    n: usize,
    edges: &[(u32, u32)],
    dim: usize,
    seed: u64,
    title_of: impl Fn(u32) -> String,
) -> Vec<f32> {
    let mut base: Vec<f32> = Vec::with_capacity(n * dim);
    for t in 0..n as u32 {
        base.extend(base_vector(&title_of(t), dim, seed));
    }
    let mut out = base.clone();
    let row = |t: u32| (t as usize * dim)..(t as usize + 1) * dim;
    for &(s, t) in edges {
        if s == t {
            continue;
        }
        if let (Some(bs), Some(bt)) = (base.get(row(s)), base.get(row(t))) {
            if let Some(vt) = out.get_mut(row(t)) {
                add(vt, bs);
            }
            if let Some(vs) = out.get_mut(row(s)) {
                add(vs, bt);
            }
        }
    }
    drop(base);
    for v in out.chunks_exact_mut(dim.max(1)) {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
    }
    out
}

fn add(acc: &mut [f32], v: &[f32]) {
    for (a, x) in acc.iter_mut().zip(v) {
        *a += x;
    }
}

/// A pseudo-random vector with components uniform in [-1, 1), from FNV-1a of the text
/// seeding SplitMix64.
fn base_vector(text: &str, dim: usize, seed: u64) -> Vec<f32> {
    let mut state = text.bytes().fold(0xcbf2_9ce4_8422_2325u64 ^ seed, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (0..dim)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            // 24 high bits → [0, 1) exactly representable in f32.
            ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        wikisuggest_engine::SdotKernel::default().cosine(a, b)
    }

    #[test]
    fn title_vector_is_the_mean_of_known_words() -> Result<()> {
        let wv = WordVectors::new(
            vec!["domestic".into(), "cat".into(), "(".into()],
            2,
            vec![1.0, 0.0, 0.0, 1.0, 9.0, 9.0],
        )?;
        let tok = MwTokenizer::new("en").map_err(|e| BuildError::InvalidArgument(e.to_string()))?;
        assert_eq!(
            wv.title_vector("Domestic cat (animal)", &tok),
            Some(vec![0.5, 0.5])
        );
        assert_eq!(wv.title_vector("Unknown", &tok), None);
        assert!(WordVectors::new(vec!["a".into()], 2, vec![1.0]).is_err());
        Ok(())
    }

    #[test]
    fn linked_titles_are_closer_than_unrelated_ones() {
        let names = ["A", "B", "C", "D", "E"];
        let name = |t: u32| names.get(t as usize).copied().unwrap_or("").to_owned();
        // A and B both link C and D; E is alone.
        let edges = [(0, 2), (0, 3), (1, 2), (1, 3)];
        let v = link_graph_vectors(5, &edges, 50, 7, name);
        assert_eq!(v.len(), 5 * 50);
        let r = |t: usize| &v[t * 50..(t + 1) * 50];
        assert!(cosine(r(0), r(1)) > cosine(r(0), r(4)) + 0.3);
        let again = link_graph_vectors(5, &edges, 50, 7, name);
        assert_eq!(v, again);
        assert_ne!(link_graph_vectors(5, &edges, 50, 8, name), v);
    }
}
