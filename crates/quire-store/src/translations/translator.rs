//! The machine translator a run sends its text to. The HTTP service implements it
//! (`quire_server::translator`: an OpenAI-compatible chat-completions endpoint or a
//! LibreTranslate-compatible one, every request through the outbound policy); this crate only
//! says what is asked and cuts it into requests that fit [`MAX_BATCH_CHARS`].

use std::future::Future;
use std::pin::Pin;

/// The most characters of text one request carries: well inside what chat models take in one
/// message and what LibreTranslate servers accept by default.
pub const MAX_BATCH_CHARS: usize = 6_000;
/// The most texts one request carries.
pub const MAX_BATCH_TEXTS: usize = 50;

/// One request: texts in the tagged form of `quire_content::translate` (tags stand for markup
/// that must come back unchanged), in `source` language, to translate into `target`.
#[derive(Clone, Debug)]
pub struct Request {
    pub source: String,
    pub target: String,
    /// The translation's instructions, as plain text (empty: none).
    pub instructions: String,
    /// Terms with the translation the organization's glossary gives them in `target`.
    pub glossary: Vec<(String, String)>,
    pub texts: Vec<String>,
}

/// Why a request gave no translation.
#[derive(Clone, Debug)]
pub struct TranslateError {
    pub message: String,
    /// Worth trying again later (a timeout, a 429 or 5xx answer, a refused connection); false
    /// for what another try would not change (refused by the outbound policy, a 4xx answer, an
    /// answer that does not read).
    pub transient: bool,
}

impl std::fmt::Display for TranslateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type TranslateFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<String>, TranslateError>> + Send + 'a>>;

/// A configured translator.
pub trait Translator: Send + Sync {
    /// The translations of `request.texts`, in their order, as many as were given. A
    /// translator retries transient failures itself, with backoff, before it answers one.
    fn translate<'a>(&'a self, request: &'a Request) -> TranslateFuture<'a>;

    /// What it is, for logs and the run's errors (`openai (gpt-4o-mini) at https://...`).
    fn describe(&self) -> String;
}

/// The English name of a language of [`crate::spaces::LANGUAGES`], as a translator is told it
/// (a model follows "Brazilian Portuguese" better than `pt-br`); "an unknown language" for
/// any other code, which the store does not let a space have.
pub fn language_name(code: &str) -> &'static str {
    match code {
        "en" => "English",
        "fr" => "French",
        "de" => "German",
        "es" => "Spanish",
        "it" => "Italian",
        "pt" => "Portuguese",
        "pt-br" => "Brazilian Portuguese",
        "ru" => "Russian",
        "ja" => "Japanese",
        "zh" => "Simplified Chinese",
        "zh-tw" => "Traditional Chinese",
        "yue" => "Cantonese",
        "ko" => "Korean",
        "ar" => "Arabic",
        "hi" => "Hindi",
        "nl" => "Dutch",
        "pl" => "Polish",
        "tr" => "Turkish",
        "sv" => "Swedish",
        "no" => "Norwegian Bokmål",
        "da" => "Danish",
        "fi" => "Finnish",
        "el" => "Greek",
        "cs" => "Czech",
        "hu" => "Hungarian",
        "ro" => "Romanian",
        "th" => "Thai",
        "vi" => "Vietnamese",
        "id" => "Indonesian",
        "ms" => "Malay",
        "he" => "Hebrew",
        "uk" => "Ukrainian",
        "sk" => "Slovak",
        "bg" => "Bulgarian",
        "hr" => "Croatian",
        "lt" => "Lithuanian",
        "lv" => "Latvian",
        "et" => "Estonian",
        "sl" => "Slovenian",
        _ => "an unknown language",
    }
}

/// Cuts texts into consecutive batches of at most [`MAX_BATCH_TEXTS`] texts and about
/// [`MAX_BATCH_CHARS`] characters (a longer text goes alone): ranges into `texts`.
pub fn batches(texts: &[String]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = 0;
    for (i, text) in texts.iter().enumerate() {
        let len = text.chars().count();
        if i > start && (chars + len > MAX_BATCH_CHARS || i - start >= MAX_BATCH_TEXTS) {
            out.push(start..i);
            start = i;
            chars = 0;
        }
        chars += len;
    }
    if start < texts.len() {
        out.push(start..texts.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_space_language_has_a_name() {
        for code in crate::spaces::LANGUAGES {
            assert_ne!(language_name(code), "an unknown language", "{code}");
        }
        assert_eq!(language_name("xx"), "an unknown language");
    }

    #[test]
    fn batches_fit_the_limits_and_cover_every_text() {
        let texts: Vec<String> = (0..120)
            .map(|i| "x".repeat(if i == 7 { 9_000 } else { 100 }))
            .collect();
        let cut = batches(&texts);
        let mut next = 0;
        for range in &cut {
            assert_eq!(range.start, next);
            next = range.end;
            assert!(range.len() <= MAX_BATCH_TEXTS);
            let chars: usize = texts[range.clone()].iter().map(String::len).sum();
            assert!(
                chars <= MAX_BATCH_CHARS || range.len() == 1,
                "{range:?} has {chars}"
            );
        }
        assert_eq!(next, texts.len());
        assert!(batches(&[]).is_empty());
    }
}
