//! Integration secrets sealed at rest: XChaCha20-Poly1305 under the key of `QUIRE_SECRETS_KEY`
//! (or the data directory's `secrets.key`). A sealed value is `v1.` and the base64 of a random
//! 24-byte nonce followed by the ciphertext and its tag: random nonces of that size never
//! repeat in practice, so no counter has to be kept across processes.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::error::StoreError;

const PREFIX: &str = "v1.";
const NONCE_LEN: usize = 24;

/// The key secrets are sealed with (32 bytes).
#[derive(Clone)]
pub struct SecretsKey([u8; 32]);

impl std::fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretsKey(..)")
    }
}

/// A random key, for settings made in tests: what it seals opens only in this process.
impl Default for SecretsKey {
    fn default() -> Self {
        SecretsKey(rand::random())
    }
}

impl SecretsKey {
    pub fn new(bytes: [u8; 32]) -> SecretsKey {
        SecretsKey(bytes)
    }

    /// A key from its text: 64 hex digits or the base64 of 32 bytes.
    pub fn parse(text: &str) -> Result<SecretsKey, String> {
        let text = text.trim();
        let bytes = if text.len() == 64 && text.chars().all(|c| c.is_ascii_hexdigit()) {
            (0..32)
                .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|e| e.to_string())?
        } else {
            STANDARD
                .decode(text)
                .map_err(|_| "a secrets key is 64 hex digits or the base64 of 32 bytes".to_string())?
        };
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| "a secrets key is 32 bytes".to_string())?;
        Ok(SecretsKey(bytes))
    }

    /// A new random key, as 64 hex digits.
    pub fn generate() -> String {
        let bytes: [u8; 32] = rand::random();
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new((&self.0).into())
    }

    pub fn seal(&self, plain: &[u8]) -> Result<String, StoreError> {
        let nonce: [u8; NONCE_LEN] = rand::random();
        let sealed = self
            .cipher()
            .encrypt(XNonce::from_slice(&nonce), plain)
            .map_err(|_| StoreError::internal("cannot seal a secret"))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{}", STANDARD.encode(out)))
    }

    /// Opens what [`SecretsKey::seal`] made; an error when it was sealed with another key.
    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, StoreError> {
        let failed = || {
            StoreError::internal(
                "a stored secret does not open with this QUIRE_SECRETS_KEY (was the key changed?)",
            )
        };
        let bytes = sealed
            .strip_prefix(PREFIX)
            .and_then(|b| STANDARD.decode(b).ok())
            .ok_or_else(failed)?;
        if bytes.len() < NONCE_LEN {
            return Err(failed());
        }
        let (nonce, body) = bytes.split_at(NONCE_LEN);
        self.cipher()
            .decrypt(XNonce::from_slice(nonce), body)
            .map_err(|_| failed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_with_their_key_only() {
        let key = SecretsKey::parse(&SecretsKey::generate()).unwrap();
        let sealed = key.seal(b"{\"token\":\"abc\"}").unwrap();
        assert!(!sealed.contains("abc"));
        assert_eq!(key.open(&sealed).unwrap(), b"{\"token\":\"abc\"}");
        assert_ne!(key.seal(b"x").unwrap(), key.seal(b"x").unwrap(), "nonces differ");
        let other = SecretsKey::parse(&SecretsKey::generate()).unwrap();
        assert!(other.open(&sealed).is_err());
        assert!(key.open("v1.AAAA").is_err());
        assert!(SecretsKey::parse("short").is_err());
    }
}
