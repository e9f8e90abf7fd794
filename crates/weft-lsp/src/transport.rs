//! Input framing guard. tower-lsp-server's reader stops at the first message it
//! cannot decode (its framed stream ends after an error), which would leave the
//! server deaf after one malformed message. This filter reads the LSP framing
//! itself and replaces bodies that are not JSON-RPC 2.0 messages by a no-op
//! notification, so the server logs nothing, answers nothing, and goes on.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};

const PLACEHOLDER: &[u8] = br#"{"jsonrpc":"2.0","method":"$/weft/malformedMessage"}"#;

/// Largest body accepted (a bigger Content-Length is treated as malformed framing).
const MAX_BODY: usize = 256 << 20;

/// Copies framed messages from `input` to `output`, sanitising bodies.
pub(crate) async fn filter(input: impl AsyncRead + Unpin, mut output: DuplexStream) {
    let mut reader = BufReader::new(input);
    loop {
        let mut length: Option<usize> = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok().filter(|n| *n <= MAX_BODY);
            }
        }
        let Some(length) = length else { continue };
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let body = if is_message(&body) { body.as_slice() } else { PLACEHOLDER };
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        if output.write_all(header.as_bytes()).await.is_err()
            || output.write_all(body).await.is_err()
        {
            return;
        }
    }
}

/// Whether a body is a JSON-RPC 2.0 request, notification or response that
/// tower-lsp-server can decode.
fn is_message(body: &[u8]) -> bool {
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(body) else { return false };
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return false;
    }
    let id_ok = match message.get("id") {
        None | Some(Value::Null | Value::Number(_) | Value::String(_)) => true,
        Some(_) => false,
    };
    match message.get("method") {
        Some(Value::String(_)) => id_ok,
        Some(_) => false,
        None => {
            id_ok
                && message.contains_key("id")
                && (message.contains_key("result") || message.contains_key("error"))
        }
    }
}
