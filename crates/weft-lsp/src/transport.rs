//! Input framing guard. tower-lsp-server's reader stops at the first message it
//! cannot decode (its framed stream ends after an error), which left the server deaf,
//! and then ended, after one malformed message. This module reads the LSP framing
//! itself, tries each body with the server's own decoder, answers a body it cannot
//! decode with the JSON-RPC error the specification names (parse error or invalid
//! request, with a `null` id) and passes only decodable messages on. The answers and
//! the server's own output are written whole frames at a time by one writer.

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc;

/// Largest body accepted (a bigger Content-Length is treated as malformed framing).
const MAX_BODY: usize = 256 << 20;

/// Frames waiting for the writer; bounded so that a client that stops reading stops
/// the server (backpressure) instead of growing a queue.
const FRAMES_IN_FLIGHT: usize = 64;

/// Serves LSP over `input`/`output` behind the guard until `exit`; whether `shutdown`
/// came first.
pub async fn serve_guarded(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
    runner: Option<std::path::PathBuf>,
) -> bool {
    let (to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, from_server) = tokio::io::duplex(1 << 20);
    let (frames, queue) = mpsc::channel(FRAMES_IN_FLIGHT);
    let writer = tokio::spawn(write_frames(queue, output));
    tokio::spawn(filter(input, to_server, frames.clone()));
    let reframer = tokio::spawn(reframe(from_server, frames));
    let shut_down = crate::server::serve(server_in, server_out, runner).await;
    // The server's output ends with `serve`: every frame it wrote reaches the client
    // before the process ends, unless the client has stopped reading.
    let flushed = async {
        let _ = reframer.await;
        let _ = writer.await;
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), flushed).await;
    shut_down
}

/// Copies framed messages from `input` to `output`, answering bodies the server cannot
/// decode through `replies`.
async fn filter(
    input: impl AsyncRead + Unpin,
    mut output: DuplexStream,
    replies: mpsc::Sender<Frame>,
) {
    let mut reader = BufReader::new(input);
    while let Some(body) = read_frame(&mut reader).await {
        let error = match classify(&body) {
            Body::Message => None,
            Body::NotJson => Some((jsonrpc::Id::Null, jsonrpc::Error::parse_error())),
            Body::Invalid => Some((jsonrpc::Id::Null, jsonrpc::Error::invalid_request())),
            Body::ShutdownWithParams(id) => {
                Some((id, jsonrpc::Error::invalid_params("`shutdown` takes no parameters")))
            }
        };
        if let Some((id, error)) = error {
            let reply = jsonrpc::Response::from_error(id, error);
            let body = serde_json::to_vec(&reply).unwrap_or_default();
            if replies.send(Frame::Message(frame(&body))).await.is_err() {
                return;
            }
            continue;
        }
        if output.write_all(&frame(&body)).await.is_err() {
            return;
        }
    }
}

/// What the writer receives.
enum Frame {
    /// A whole framed message.
    Message(Vec<u8>),
    /// The server's output ended: nothing more to write.
    End,
}

/// Splits the server's output into frames for the writer.
async fn reframe(input: DuplexStream, frames: mpsc::Sender<Frame>) {
    let mut reader = BufReader::new(input);
    while let Some(body) = read_frame(&mut reader).await {
        if frames.send(Frame::Message(frame(&body))).await.is_err() {
            return;
        }
    }
    let _ = frames.send(Frame::End).await;
}

async fn write_frames(mut frames: mpsc::Receiver<Frame>, mut output: impl AsyncWrite + Unpin) {
    while let Some(Frame::Message(bytes)) = frames.recv().await {
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// The next body, skipping headers it cannot use; `None` at the end of the input.
async fn read_frame(reader: &mut (impl AsyncBufReadExt + Unpin)) -> Option<Vec<u8>> {
    loop {
        let mut length: Option<usize> = None;
        loop {
            // Header lines are bytes: a client that counts Content-Length in characters
            // leaves the tail of a multi-byte character in front of the next header.
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end();
            if line.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            if let Some(value) = content_length(line) {
                length = value.trim().parse().ok().filter(|n| *n <= MAX_BODY);
            }
        }
        let Some(length) = length else { continue };
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await.ok()?;
        return Some(body);
    }
}

/// The value of a `Content-Length` header in `line`, also when bytes left over from
/// a miscounted body precede the header name on the same line.
fn content_length(line: &str) -> Option<&str> {
    const NAME: &str = "content-length:";
    let lower = line.to_ascii_lowercase();
    // ASCII lower-casing keeps byte offsets, so the offset indexes `line` too.
    let start = lower.find(NAME)? + NAME.len();
    line.get(start..)
}

#[derive(Debug, PartialEq, Eq)]
enum Body {
    /// A request, notification or response that the server decodes.
    Message,
    /// Not UTF-8 JSON.
    NotJson,
    /// JSON that is not a message the server decodes (an id that is not an `i64` or a
    /// string, a missing or duplicated member, a wrong version, ...).
    Invalid,
    /// A `shutdown` request with parameters (it takes none). tower-lsp-server enters its
    /// shut-down state before it refuses the parameters, so the server's own `shutdown`
    /// never runs, the real `shutdown` is refused and `exit` ended the server with
    /// status 1 (the fuzzer found it); the guard answers it with invalid params.
    ShutdownWithParams(jsonrpc::Id),
}

fn classify(body: &[u8]) -> Body {
    let Ok(value) = serde_json::from_slice::<Value>(body) else { return Body::NotJson };
    // The server's decoder keeps the last of duplicated members where `Value` would
    // silently do the same; such a message is ambiguous, so it is invalid.
    if !value.is_object() || has_duplicate_members(body) {
        return Body::Invalid;
    }
    // The server decodes a body as a response or else as a request (tower-lsp-server's
    // `Message`); a body either of them accepts is one it can serve.
    // `initialize` and `shutdown` are requests: sent without an id, tower-lsp-server
    // still changes its state (a `shutdown` notification made it refuse the real
    // `shutdown`, so `exit` ended the server with status 1). The fuzzer found it.
    let request_only = value.get("id").is_none()
        && matches!(value.get("method").and_then(Value::as_str), Some("initialize" | "shutdown"));
    let decodes = serde_json::from_value::<jsonrpc::Response>(value.clone()).is_ok()
        || serde_json::from_value::<jsonrpc::Request>(value.clone()).is_ok();
    if !decodes || request_only {
        return Body::Invalid;
    }
    let params = value.get("params").filter(|params| !params.is_null());
    match (value.get("method").and_then(Value::as_str), params, value.get("id")) {
        (Some("shutdown"), Some(_), Some(id)) => {
            serde_json::from_value(id.clone()).map_or(Body::Invalid, Body::ShutdownWithParams)
        }
        _ => Body::Message,
    }
}

/// Whether the top-level object of `body` names a member twice.
fn has_duplicate_members(body: &[u8]) -> bool {
    struct Members(bool);
    impl<'de> Deserialize<'de> for Members {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Visitor;
            impl<'de> serde::de::Visitor<'de> for Visitor {
                type Value = Members;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Members, A::Error> {
                    let mut seen = rustc_hash::FxHashSet::default();
                    let mut duplicate = false;
                    while let Some(key) = map.next_key::<String>()? {
                        duplicate |= !seen.insert(key);
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                    Ok(Members(duplicate))
                }
            }
            deserializer.deserialize_map(Visitor)
        }
    }
    serde_json::from_slice::<Members>(body).is_ok_and(|members| members.0)
}

#[cfg(test)]
mod tests {
    use super::{Body, classify, content_length};

    #[test]
    fn bodies_the_server_cannot_decode_are_classified() {
        let message = |text: &str| classify(text.as_bytes());
        assert_eq!(message(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#), Body::Message);
        assert_eq!(message(r#"{"jsonrpc":"2.0","id":"a","method":"x"}"#), Body::Message);
        assert_eq!(message(r#"{"jsonrpc":"2.0","method":"initialized"}"#), Body::Message);
        assert_eq!(message(r#"{"jsonrpc":"2.0","id":3,"result":null}"#), Body::Message);
        for invalid in [
            r#"{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}"#,
            r#"{"jsonrpc":"2.0","id":1e300,"method":"shutdown"}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"shutdown"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"shutdown","method":"exit"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"shutdown"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"shutdown"}"#,
            r#"{"jsonrpc":"2.0","method":"shutdown"}"#,
            r#"{"jsonrpc":"2.0","method":"initialize","params":{"capabilities":{}}}"#,
            "[1, 2]",
        ] {
            assert_eq!(message(invalid), Body::Invalid, "{invalid}");
        }
        assert_eq!(
            message(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown","params":"2.0"}"#),
            Body::ShutdownWithParams(tower_lsp_server::jsonrpc::Id::Number(2))
        );
        assert_eq!(
            message(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown","params":null}"#),
            Body::Message
        );
        assert_eq!(message("{ not json"), Body::NotJson);
        assert_eq!(classify(b"{\"a\":\"\xC3\"}"), Body::NotJson);
    }

    #[test]
    fn a_header_after_leftover_bytes_is_found() {
        assert_eq!(content_length("Content-Length: 12"), Some(" 12"));
        assert_eq!(content_length("\u{fffd}\"}}content-length:7"), Some("7"));
        assert_eq!(content_length("Content-Type: x"), None);
    }
}
