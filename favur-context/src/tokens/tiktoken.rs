//! Exact token counts for OpenAI encodings (feature `tiktoken`), with the vocabularies
//! embedded in the `tiktoken-rs` crate: nothing is downloaded at build or run time.
//! (Feature `bpe-openai`'s [`BpeCounter`](crate::tokens::BpeCounter) gives the same counts,
//! faster.)

use tiktoken_rs::CoreBPE;

use crate::tokens::encoding::{Encoding, encoding_counter};

encoding_counter! {
    /// Exact token counts for an OpenAI [`Encoding`], as `tiktoken` gives them (special
    /// tokens in the text are counted as ordinary text). Its
    /// [`id`](crate::tokens::TokenCounter::id) is `tiktoken/<encoding>`.
    ///
    /// ```
    /// use favur_context::tokens::{TiktokenCounter, TokenCounter};
    /// use favur_context::{fuzzy, History};
    /// let o200k = TiktokenCounter::o200k();
    /// assert_eq!(o200k.count_text("hello world"), 2);
    /// assert_eq!(o200k.id(), "tiktoken/o200k_base");
    /// let mut h = History::with_counter(TiktokenCounter::for_model("gpt-4.1").unwrap());
    /// let id = h.append(fuzzy!(user: "hello world"));
    /// assert_eq!(h.recall(id).unwrap().tokens(), 2);
    /// ```
    TiktokenCounter(&'static CoreBPE), "tiktoken/",
    tiktoken_rs::o200k_base_singleton(),
    tiktoken_rs::cl100k_base_singleton(),
    |t, text| t.encode_ordinary(text).len(),
}
