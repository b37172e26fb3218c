//! Exact token counts for OpenAI encodings (feature `bpe-openai`), from the `bpe-openai`
//! crate: the counts `tiktoken` gives, counted without building the token vector, with
//! the vocabularies embedded in the crate (nothing is downloaded at build or run time).

use crate::tokens::encoding::{Encoding, encoding_counter};

encoding_counter! {
    /// Exact token counts for an OpenAI [`Encoding`] from the `bpe-openai` crate: the same
    /// counts as tiktoken's (special tokens in the text counted as ordinary text), counted
    /// with the crate's count-only entry point, several times faster than
    /// [`TiktokenCounter`](crate::tokens::TiktokenCounter) (see `docs/tokens.md`). Its
    /// [`id`](crate::tokens::TokenCounter::id) is `bpe-openai/<encoding>`.
    ///
    /// ```
    /// use favur_context::tokens::{BpeCounter, TokenCounter};
    /// use favur_context::{fuzzy, History};
    /// let o200k = BpeCounter::o200k();
    /// assert_eq!(o200k.count_text("hello world"), 2);
    /// assert_eq!(o200k.id(), "bpe-openai/o200k_base");
    /// let mut h = History::with_counter(BpeCounter::for_model("gpt-4.1").unwrap());
    /// let id = h.append(fuzzy!(user: "hello world"));
    /// assert_eq!(h.recall(id).unwrap().tokens(), 2);
    /// ```
    BpeCounter(&'static bpe_openai::Tokenizer), "bpe-openai/",
    bpe_openai::o200k_base(),
    bpe_openai::cl100k_base(),
    |t, text| t.count(text),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_counted_with_it_reopens_with_it() {
        let mut h = crate::History::with_counter(BpeCounter::cl100k());
        h.append(crate::fuzzy!(user: "hello world, again"));
        let back = crate::History::from_json(&h.to_json()).unwrap();
        assert_eq!(back.counter().id(), "bpe-openai/cl100k_base");
        assert_eq!(back.entries(), h.entries());
        assert!(BpeCounter::from_id("bpe-openai/p50k_base").is_none());
        assert!(BpeCounter::from_id("tiktoken/o200k_base").is_none());
    }
}
