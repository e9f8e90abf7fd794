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

fuzz_target!(|data: &[u8]| {
    if [&b"exit"[..], b"executecommand", b"\\u"].iter().any(|n| contains(data, n)) {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (mut client, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, mut from_server) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(weft_lsp::serve_guarded(server_in, server_out));
        // Read everything the server says, so it never blocks on a full pipe.
        let reader = tokio::spawn(async move {
            let mut said = Vec::new();
            let _ = from_server.read_to_end(&mut said).await;
            said
        });
        let init = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}"#;
        let mut input = frame(init);
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
        for piece in data.split(|&b| b == 0) {
            match piece.strip_prefix(b"#") {
                Some(raw) => input.extend_from_slice(raw),
                None => input.extend(frame(piece)),
            }
        }
        // Whatever came before, a complete header starts here.
        input.extend_from_slice(b"\r\n\r\n");
        input.extend(frame(br#"{"jsonrpc":"2.0","id":"end","method":"shutdown"}"#));
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        client.write_all(&input).await.expect("the server reads");
        let shut_down = tokio::time::timeout(std::time::Duration::from_secs(20), server)
            .await
            .expect("the server ends after `exit`")
            .expect("the server task does not panic");
        drop(client);
        let said = reader.await.expect("the reader ends");
        let said = String::from_utf8_lossy(&said);
        assert!(said.contains(r#""id":"end""#), "no answer to `shutdown`: {said}");
        assert!(shut_down, "`exit` after `shutdown` ends the server as shut down");
    });
});
