//! End-to-end tests of `weft lsp`: the real binary over stdio, driven by a small
//! JSON-RPC client (initialize, open, change, hover, definition, rename,
//! formatting, shutdown, exit), and robustness against malformed input.

#![expect(clippy::unwrap_used, reason = "the test client fails loudly on a broken server")]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Notifications received while waiting for responses.
    notifications: Vec<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = common::weft()
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("weft lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse().unwrap();
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                if sender.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Client { child, stdin, messages, notifications: Vec::new(), next_id: 0 }
    }

    fn send_raw(&mut self, body: &str) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        let body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.send_raw(&body.to_string());
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_raw(&body.to_string());
        self.response(id)
    }

    fn response(&mut self, id: i64) -> Value {
        loop {
            let message = self.messages.recv_timeout(Duration::from_secs(30)).expect("a response");
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                // A server-to-client request: answer null.
                let reply = json!({ "jsonrpc": "2.0", "id": message["id"], "result": null });
                self.send_raw(&reply.to_string());
            } else {
                self.notifications.push(message);
            }
        }
    }

    /// Waits for diagnostics of `uri` that satisfy `accept`.
    fn diagnostics(&mut self, uri: &str, accept: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found = self.notifications.iter().rev().find(|n| {
                n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri
            });
            if let Some(n) = found {
                let diagnostics =
                    n["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
                if accept(&diagnostics) {
                    self.notifications.clear();
                    return diagnostics;
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.messages.recv_timeout(left).expect("diagnostics in time");
            self.notifications.push(message);
        }
    }

    fn initialize(&mut self, root: &str) {
        let response = self.request(
            "initialize",
            json!({ "processId": null, "rootUri": root, "capabilities": {} }),
        );
        assert!(response["result"]["capabilities"]["hoverProvider"].as_bool().unwrap());
        self.notify("initialized", json!({}));
    }

    /// `shutdown`, `exit`, and the process must end at once with status 0.
    fn shutdown(mut self) {
        let response = self.request("shutdown", Value::Null);
        assert!(response.get("error").is_none(), "{response}");
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "{status}");
                return;
            }
            assert!(Instant::now() < deadline, "the server did not exit after `exit`");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn workspace(name: &str, files: &[(&str, &str)]) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("weft-lsp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    let uri = format!("file://{}", dir.display());
    (dir, uri)
}

const LIB: &str = "-- | Squares a number.\ndef sqr (x: f32) : f32 = x * x\n";
const MAIN: &str =
    "import \"lib\"\n-- Größe 😀\nentry main (xs: [n]f32) : [n]f32 = map (\\x -> sqr x) xs\n";

fn position(text: &str, needle: &str, delta: usize) -> Value {
    let offset = text.find(needle).unwrap() + delta;
    let line = text[..offset].matches('\n').count();
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let character: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    json!({ "line": line, "character": character })
}

/// "Profile" (the lens's command): the real `weft profile` out of process, with the
/// test block's input, writes the cost graph under the user's cache and answers its paths.
#[test]
fn profile_command_writes_the_cost_graph() {
    let text = "-- ==\n-- input { [1f32, 2f32, 3f32] }\nentry twice (xs: [n]f32) : [n]f32 = map (\\x -> x * 2f32) xs\n";
    let (dir, root) = workspace("profile", &[("main.weft", text)]);
    let uri = format!("{root}/main.weft");
    let mut client = Client::start();
    client.initialize(&root);
    let lenses = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    let profile = lenses["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["command"]["title"] == "Profile")
        .cloned()
        .unwrap();
    let result = client.request(
        "workspace/executeCommand",
        json!({ "command": profile["command"]["command"], "arguments": profile["command"]["arguments"] }),
    );
    let result = &result["result"];
    assert_eq!(result["ok"], true, "{result}");
    // Under the user's cache, not beside the source.
    let out = PathBuf::from(result["dir"].as_str().unwrap());
    assert!(out.ends_with("main.twice.profile") && !out.starts_with(&dir), "{out:?}");
    assert!(out.to_string_lossy().contains("weft/profiles/"), "{out:?}");
    assert!(!dir.join("main.twice.profile").exists());
    assert_eq!(result["dot"], out.join("graph.dot").display().to_string());
    assert!(out.join("graph.dot").exists());
    assert!(result["report"].as_str().unwrap().contains("work"), "{result}");
    // The SVG needs Graphviz; without it the message says so.
    // The editors open the summary, read at a glance; graph.svg has every node.
    if out.join("summary.svg").exists() {
        assert_eq!(result["svg"], out.join("summary.svg").display().to_string());
        assert!(std::fs::read_to_string(out.join("summary.svg")).unwrap().contains("<svg"));
    } else {
        assert_eq!(result["svg"], Value::Null);
        assert!(result["message"].as_str().unwrap().contains("Graphviz"), "{result}");
    }
    // An entry without inputs to run with: the answer says why.
    let bad = client.request(
        "workspace/executeCommand",
        json!({ "command": "weft.server.profile", "arguments": [{ "uri": uri, "entry": "nope" }] }),
    );
    assert_eq!(bad["result"]["ok"], false, "{bad}");
    assert!(bad["result"]["message"].as_str().unwrap().contains("no entry `nope`"), "{bad}");
    client.shutdown();
    let _ = std::fs::remove_dir_all(out);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn session_open_change_hover_definition_rename_format_shutdown() {
    let (dir, root) = workspace("session", &[("lib.weft", LIB), ("main.weft", MAIN)]);
    let uri = format!("{root}/main.weft");
    let mut client = Client::start();
    client.initialize(&root);
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "weft", "version": 1, "text": MAIN } }),
    );
    assert!(client.diagnostics(&uri, <[Value]>::is_empty).is_empty());

    // A type error, typed incrementally after the non-ASCII comment.
    let edit_at = position(MAIN, "sqr x", 5);
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": uri, "version": 2 },
            "contentChanges": [{ "range": { "start": edit_at, "end": edit_at }, "text": " + true" }],
        }),
    );
    let diagnostics = client.diagnostics(&uri, |d| !d.is_empty());
    assert_eq!(diagnostics[0]["severity"], 1, "{diagnostics:?}");
    let text = MAIN.replace("sqr x)", "sqr x + true)");

    // Hover and definition still work in the file with a type error.
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": position(&text, "sqr x", 1) }),
    );
    let markdown = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(
        markdown.contains("def sqr : f32 -> f32") && markdown.contains("Squares"),
        "{markdown}"
    );
    let definition = client.request(
        "textDocument/definition",
        json!({ "textDocument": { "uri": uri }, "position": position(&text, "sqr x", 0) }),
    );
    let target = &definition["result"][0];
    assert_eq!(target["uri"], format!("{root}/lib.weft"));
    assert_eq!(target["range"]["start"], json!({ "line": 1, "character": 4 }));

    // Rename across files.
    let rename = client.request(
        "textDocument/rename",
        json!({
            "textDocument": { "uri": uri },
            "position": position(&text, "sqr x", 0),
            "newName": "square",
        }),
    );
    let changes = rename["result"]["changes"].as_object().unwrap();
    assert_eq!(changes.len(), 2, "{rename}");

    // Undo the error, then format.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": uri, "version": 3 },
            "contentChanges": [{ "text": "entry main (xs:[n]f32) : [n]f32 =   map (\\x->x) xs\n" }],
        }),
    );
    let formatting = client.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert_eq!(
        formatting["result"][0]["newText"],
        "entry main (xs: [n]f32) : [n]f32 = map (\\x -> x) xs\n"
    );
    // With a syntax error in one declaration, the others are formatted, and the server
    // says which it left as written (it once silently did nothing).
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": uri, "version": 4 },
            "contentChanges": [{ "text": "def f (x: i32) : i32 = (x +\nentry main (xs:[n]f32) : [n]f32 =   xs\n" }],
        }),
    );
    let formatting = client.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    assert_eq!(
        formatting["result"][0]["newText"],
        "def f (x: i32) : i32 = (x +\nentry main (xs: [n]f32) : [n]f32 = xs\n"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let warning = loop {
        if let Some(n) = client.notifications.iter().find(|n| n["method"] == "window/showMessage") {
            break n["params"]["message"].as_str().unwrap().to_owned();
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let message = client.messages.recv_timeout(left).expect("a message about formatting");
        client.notifications.push(message);
    };
    assert!(
        warning.starts_with("Weft: formatted all but the declarations with syntax errors: line 1"),
        "{warning}"
    );
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn survives_malformed_and_unexpected_requests() {
    let (dir, root) = workspace("robust", &[("a.weft", "def f (x: i32) : i32 = x\n")]);
    let uri = format!("{root}/a.weft");
    let mut client = Client::start();
    client.initialize(&root);
    // Not JSON at all, then JSON that is not a request.
    client.send_raw("{ this is not json");
    client.send_raw("[1, 2, 3]");
    // An unknown method: MethodNotFound.
    let unknown = client.request("weft/noSuchMethod", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // A document the server has never seen: no answer, no error.
    let missing = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": format!("{root}/nope.weft") }, "position": { "line": 0, "character": 0 } }),
    );
    assert_eq!(missing["result"], Value::Null, "{missing}");
    // Positions past the end of a line and of the file are clamped.
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "weft", "version": 1, "text": "def f (x: i32) : i32 = x\n" } }),
    );
    for position in [json!({ "line": 0, "character": 500 }), json!({ "line": 99, "character": 3 })]
    {
        let response = client.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": position }),
        );
        assert!(response.get("error").is_none(), "{response}");
        let response = client.request(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": position }),
        );
        assert!(response.get("error").is_none(), "{response}");
    }
    // Invalid params for a known method: an error, and the server goes on.
    let invalid = client.request("textDocument/hover", json!({ "bogus": true }));
    assert!(invalid.get("error").is_some(), "{invalid}");
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

/// Bodies that pass a JSON check but not the server's decoder, and a header line with a
/// split UTF-8 sequence, once ended the server (exit 1): each now gets the JSON-RPC error
/// the specification names, with a `null` id, and the server goes on; so does a
/// `shutdown` with parameters, answered with its own id.
#[test]
fn undecodable_messages_get_json_rpc_errors_and_the_server_goes_on() {
    let (dir, root) = workspace("undecodable", &[("a.weft", "def f (x: i32) : i32 = x\n")]);
    let mut client = Client::start();
    client.initialize(&root);
    let bodies = [
        r#"{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","id":1e300,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"shutdown","method":"exit"}"#,
        "{ not json",
    ];
    for body in bodies {
        client.send_raw(body);
    }
    // A client that miscounts Content-Length: the body ends inside `é`, and its second
    // byte comes before the next header, on the same line.
    let text = r#"{"jsonrpc":"2.0","method":"$/note","params":{"t":"é"}}"#;
    let split = text.find('é').unwrap() + 1;
    let next = r#"{"jsonrpc":"2.0","id":99,"method":"weft/noSuchMethod"}"#;
    let mut bytes = format!("Content-Length: {split}\r\n\r\n").into_bytes();
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(format!("Content-Length: {}\r\n\r\n{next}", next.len()).as_bytes());
    client.stdin.write_all(&bytes).unwrap();
    client.stdin.flush().unwrap();
    let mut errors: Vec<i64> = (0..bodies.len() + 1)
        .map(|_| {
            let message =
                client.messages.recv_timeout(Duration::from_secs(30)).expect("an error response");
            assert_eq!(message["id"], Value::Null, "{message}");
            message["error"]["code"].as_i64().unwrap()
        })
        .collect();
    // Requests are served concurrently, so their answers may come in any order.
    errors.sort_unstable();
    assert_eq!(errors, [-32700, -32700, -32600, -32600, -32600, -32600]);
    // The message after the split character is read whole.
    assert_eq!(client.response(99)["error"]["code"], -32601);
    // A `shutdown` with parameters is refused with its id, and does not shut the
    // server down: the real `shutdown` below succeeds and `exit` ends it with status 0
    // (the fuzzer found a server that then exited with status 1).
    client.send_raw(r#"{"jsonrpc":"2.0","id":5,"method":"shutdown","params":"2.0"}"#);
    assert_eq!(client.response(5)["error"]["code"], -32602);
    let unknown = client.request("weft/noSuchMethod", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn thousand_rapid_incremental_edits_keep_texts_equal() {
    let (dir, root) = workspace("edits", &[]);
    let uri = format!("{root}/e.weft");
    let mut client = Client::start();
    client.initialize(&root);
    let mut text = String::from("def f (x: i32) : i32 =\n  x\n");
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "weft", "version": 0, "text": text } }),
    );
    // A deterministic mix of inserts and deletes, with non-ASCII text.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let pieces = ["a", " + 1", "\n", "ö", "😀", "let y = 2 in ", ""];
    for version in 1..=1000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let start =
            chars.get((seed % (chars.len() as u64 + 1)) as usize).map_or(text.len(), |c| c.0);
        let max_len = text[start..].chars().take(3).count();
        let n_delete = if version % 3 == 0 { ((seed >> 8) as usize) % (max_len + 1) } else { 0 };
        let end = text[start..].char_indices().nth(n_delete).map_or(text.len(), |(i, _)| start + i);
        let insert = pieces[((seed >> 16) as usize) % pieces.len()];
        let (from, to) = (utf16_position(&text, start), utf16_position(&text, end));
        text.replace_range(start..end, insert);
        client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": version },
                "contentChanges": [{ "range": { "start": from, "end": to }, "text": insert }],
            }),
        );
    }
    let server_text =
        client.request("weft/debug/documentText", json!({ "uri": uri }))["result"].clone();
    assert_eq!(server_text, json!(text));
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

fn utf16_position(text: &str, offset: usize) -> Value {
    let line = text[..offset].matches('\n').count();
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let character: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    json!({ "line": line, "character": character })
}

/// The parent process id of `pid`, from `/proc`; `None` once it is gone or a zombie.
fn live_parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(") ")?.1.split(' ');
    let state = fields.next()?;
    if state == "Z" {
        return None;
    }
    fields.next()?.parse().ok()
}

/// Every live process below `root`.
fn descendants(root: u32) -> Vec<u32> {
    let all: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, live_parent(pid)?)))
        .collect();
    let mut found = vec![root];
    let mut idx = 0;
    while idx < found.len() {
        let parent = found[idx];
        found.extend(all.iter().filter(|(_, p)| *p == parent).map(|(pid, _)| *pid));
        idx += 1;
    }
    found.remove(0);
    found
}

/// Runs of a non-terminating entry once kept running, orphaned, long after the language
/// server died: `weft run` and its `weft-runner` now die with it, even on `kill -9`.
#[test]
fn runs_die_with_the_language_server() {
    let spin = "-- ==\n-- input { 1i64 }\n-- output { 0i64 }\nentry spin (x: i64) : i64 = loop i = x while i > 0 do i + 1\n";
    let (dir, root) = workspace("orphans", &[("spin.weft", spin)]);
    let uri = format!("{root}/spin.weft");
    let _ = common::runner();
    let mut client = Client::start();
    client.initialize(&root);
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "weft", "version": 1, "text": spin } }),
    );
    let arguments = json!([{ "uri": uri, "entry": "spin" }]);
    let body = json!({
        "jsonrpc": "2.0",
        "id": 500,
        "method": "workspace/executeCommand",
        "params": { "command": "weft.server.runEntry", "arguments": arguments },
    });
    client.send_raw(&body.to_string());
    let server = client.child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    let running = loop {
        let below = descendants(server);
        // `weft run` (the reference interpreter: "Run" starts no runner).
        if !below.is_empty() {
            break below;
        }
        assert!(Instant::now() < deadline, "the run did not start: {below:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    client.child.kill().unwrap();
    client.child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while running.iter().any(|&pid| live_parent(pid).is_some()) {
        assert!(Instant::now() < deadline, "runs outlived the server: {running:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// "Run" runs the editor's text, not the disk's (an unsaved edit once gave "Run" and
/// "Run on GPU" different answers), prints each value once, says whether the test
/// block's expected output matched, and runs `random input` cases.
#[test]
fn run_runs_the_unsaved_buffer_and_checks_the_expected_output() {
    let on_disk = "-- ==\n-- input { [1f32, 2f32] [3f32, 4f32] }\n-- output { 11f32 }\n\
                   entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0f32 (map2 (*) xs ys)\n\
                   -- ==\n-- random input { [100]i64 }\n\
                   entry count (xs: [n]i64) : i64 = reduce (+) 0 (map (\\_ -> 1i64) xs)\n";
    let (dir, root) = workspace("run-buffer", &[("main.weft", on_disk)]);
    let uri = format!("{root}/main.weft");
    let mut client = Client::start();
    client.initialize(&root);
    let run = |client: &mut Client, entry: &str| {
        let answer = client.request(
            "workspace/executeCommand",
            json!({ "command": "weft.server.runEntry", "arguments": [{ "uri": uri, "entry": entry }] }),
        );
        answer["result"].clone()
    };
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "weft", "version": 1, "text": on_disk } }),
    );
    let result = run(&mut client, "dot");
    assert_eq!(result["values"], json!(["11.0f32"]), "{result}");
    assert_eq!(result["matched"], json!(true), "{result}");
    assert!(result["message"].as_str().unwrap().contains("matches the expected output"));
    // An unsaved edit: the run sees it, and the expected output no longer matches.
    let edited = on_disk.replace("(map2 (*) xs ys)", "(map2 (\\x y -> 2f32 * x * y) xs ys)");
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    let result = run(&mut client, "dot");
    assert_eq!(result["values"], json!(["22.0f32"]), "{result}");
    assert_eq!(result["matched"], json!(false), "{result}");
    assert_eq!(result["expected"], json!("11f32"), "{result}");
    let message = result["message"].as_str().unwrap();
    assert!(message.contains("differs from the expected output"), "{message}");
    // A `random input` case: 100 values drawn, nothing expected.
    let result = run(&mut client, "count");
    assert_eq!(result["values"], json!(["100i64"]), "{result}");
    assert_eq!(result["matched"], Value::Null, "{result}");
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

/// The editor and CI once disagreed: the editor showed performance warnings that
/// `weft check` never computed. One `weft.json` now decides both, and they report the
/// same warnings at the same place (the access, not the whole combinator).
#[test]
#[expect(clippy::disallowed_methods, reason = "the test runs the real binary")]
fn editor_and_weft_check_agree_on_performance_warnings() {
    let source = "-- ==\n-- input { [[1f32, 2f32], [3f32, 4f32]] }\n\
                  entry first_col (a: [n][m]f32) : [n]f32 = map (\\r -> r[0]) a\n";
    let config = r#"{ "perfDiagnostics": true, "costProfile": "nvidia-h100" }"#;
    let (dir, root) = workspace("perf-agree", &[("main.weft", source), ("weft.json", config)]);
    // CI: `weft check` without `--perf`, as scripts/test.sh runs it.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["check", "--format", "json", "main.weft"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let checked: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(checked.len(), 1, "{checked:?}");
    // The editor, with default settings.
    let uri = format!("{root}/main.weft");
    let mut client = Client::start();
    client.initialize(&root);
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "weft", "version": 1, "text": source } }),
    );
    let published = client.diagnostics(&uri, |d| !d.is_empty());
    assert_eq!(published.len(), 1, "{published:?}");
    assert_eq!(published[0]["code"], checked[0]["code"]);
    // The server adds the help to the message; `weft check` prints it apart.
    let message = published[0]["message"].as_str().unwrap();
    assert!(message.starts_with(checked[0]["message"].as_str().unwrap()), "{message}");
    assert_eq!(published[0]["range"], checked[0]["range"], "{published:?} vs {checked:?}");
    // The squiggle marks `r[0]`, the access.
    let start = published[0]["range"]["start"]["character"].as_u64().unwrap() as usize;
    let end = published[0]["range"]["end"]["character"].as_u64().unwrap() as usize;
    assert_eq!(&source.lines().nth(2).unwrap()[start..end], "r[0]");
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}

/// An `.apl` document (docs/apl.md): APL diagnostics, a TAIL-type hover, the `main`
/// lenses and "Show kernels" with the TAIL program.
#[test]
fn apl_document_diagnostics_hover_and_lenses() {
    let text = "v ← 9 8 6\nv + 1 2\n";
    let (dir, root) = workspace("apl", &[("s.apl", text)]);
    let uri = format!("{root}/s.apl");
    let mut client = Client::start();
    client.initialize(&root);
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "apl", "version": 1, "text": text } }),
    );
    let diagnostics = client.diagnostics(&uri, |d| !d.is_empty());
    assert_eq!(diagnostics[0]["code"], "apl-error", "{diagnostics:?}");
    assert!(diagnostics[0]["message"].as_str().unwrap().starts_with("LENGTH ERROR"));
    let fixed = "v ← 9 8 6\nv + 1\n";
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": fixed }] }),
    );
    assert!(client.diagnostics(&uri, <[Value]>::is_empty).is_empty());
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": position(fixed, "v ←", 0) }),
    );
    let markdown = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(markdown.contains("<int>3"), "{markdown}");
    let lenses = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    let titles: Vec<&str> = lenses["result"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["command"]["title"].as_str())
        .collect();
    assert!(titles.contains(&"Show kernels"), "{titles:?}");
    let kernel = client.request(
        "weft/showKernel",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 0 } }),
    );
    let shown = kernel["result"]["text"].as_str().unwrap_or_default();
    assert!(shown.contains("// TAIL:") && shown.contains("__kernel"), "{kernel}");
    client.shutdown();
    let _ = std::fs::remove_dir_all(dir);
}
