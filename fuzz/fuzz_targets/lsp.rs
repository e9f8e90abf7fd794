//! Fuzzes the language server in process, framing guard included: after a valid
//! `initialize`, the input is split at `\0` bytes into message bodies (each framed with
//! its byte length; a piece starting with `#` is sent raw, without a frame, to fuzz the
//! framing), then `shutdown` must still be answered and `exit` must end the server with
//! status "shut down". A panic, a hang (libFuzzer's `-timeout`) or a server that stops
//! answering is a bug. Inputs that could end the server early (`exit`) or start
//! processes (`executeCommand`), also through JSON escapes, are skipped: they are not
//! bugs, and a fuzzer must not spawn copies of itself. Run with
//! `cargo +nightly fuzz run lsp` (docs/fuzzing.md).

#![no_main]

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

fn contains(data: &[u8], needle: &[u8]) -> bool {
    data.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

/// The largest length a `Content-Length` header in `data` announces (raw pieces may
/// hold headers whose bodies would swallow the harness's own messages).
fn announced(data: &[u8]) -> Option<usize> {
    let lower = data.to_ascii_lowercase();
    let name = b"content-length:";
    let mut max = 0usize;
    for start in (0..lower.len()).filter(|&i| lower[i..].starts_with(name)) {
        let rest = &lower[start + name.len()..];
        let digits: Vec<u8> = rest
            .iter()
            .copied()
            .skip_while(|b| b.is_ascii_whitespace())
            .take_while(u8::is_ascii_digit)
            .collect();
        if !digits.is_empty() {
            max = max.max(std::str::from_utf8(&digits).ok()?.parse().ok()?);
        }
    }
    Some(max)
}

fuzz_target!(|data: &[u8]| {
    if [&b"exit"[..], b"executecommand", b"\\u"].iter().any(|n| contains(data, n)) {
        return;
    }
    let Some(pad) = announced(data).filter(|&n| n <= 1 << 20) else { return };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (mut client, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, mut from_server) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(weft_lsp::serve_guarded(server_in, server_out, None));
        // Read everything the server says, so it never blocks on a full pipe, and pass
        // it on as it comes.
        let (said_tx, mut said_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n) = from_server.read(&mut buf).await {
                if n == 0 || said_tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let mut said = Vec::new();
        // As a client does: requests after the answer to `initialize`, `exit` after the
        // answer to `shutdown` (tower-lsp-server serves requests concurrently).
        let mut answered = async |id: &str, said: &mut Vec<u8>| {
            let needle = format!(r#""id":"{id}""#);
            tokio::time::timeout(std::time::Duration::from_secs(20), async {
                while let Some(chunk) = said_rx.recv().await {
                    said.extend(chunk);
                    if String::from_utf8_lossy(said).contains(&needle) {
                        return true;
                    }
                }
                false
            })
            .await
            .unwrap_or(false)
        };
        let init = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}"#;
        client.write_all(&frame(init)).await.expect("the server reads");
        assert!(answered("init", &mut said).await, "no answer to `initialize`");
        let mut input = frame(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
        for piece in data.split(|&b| b == 0) {
            match piece.strip_prefix(b"#") {
                Some(raw) => input.extend_from_slice(raw),
                None => input.extend(frame(piece)),
            }
        }
        // Whatever came before, a complete header starts after the end of any header
        // block and enough padding for the longest body a raw header announced.
        input.extend_from_slice(b"\r\n\r\n");
        input.extend(std::iter::repeat_n(b' ', pad));
        input.extend_from_slice(b"\r\n\r\n");
        input.extend(frame(br#"{"jsonrpc":"2.0","id":"end","method":"shutdown"}"#));
        client.write_all(&input).await.expect("the server reads");
        let answered = answered("end", &mut said).await;
        assert!(answered, "no answer to `shutdown`: {}", String::from_utf8_lossy(&said));
        client.write_all(&frame(br#"{"jsonrpc":"2.0","method":"exit"}"#)).await.expect("sent");
        let shut_down = tokio::time::timeout(std::time::Duration::from_secs(20), server)
            .await
            .expect("the server ends after `exit`")
            .expect("the server task does not panic");
        assert!(shut_down, "`exit` after `shutdown` ends the server as shut down");
    });
});
