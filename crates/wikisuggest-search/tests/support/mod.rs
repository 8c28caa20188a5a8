pub mod lucene;
