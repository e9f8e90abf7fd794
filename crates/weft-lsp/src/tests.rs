//! End-to-end tests of the server over an in-process byte stream: the whole server
//! (framing, tower-lsp-server, the owner thread, the pool, the runner module) driven by a
//! small JSON-RPC client. `weft-runner` is a stand-in shell script, so that the tests need
//! no OpenCL (crates/weft-cli/tests/lsp.rs drives the real `weft lsp` binary over stdio).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// How long a test waits for any one message.
const WAIT: Duration = Duration::from_secs(60);

struct Client {
    to_server: DuplexStream,
    from_server: BufReader<DuplexStream>,
    next_id: i64,
    /// Notifications received while waiting for responses.
    notifications: Vec<Value>,
}

impl Client {
    fn start() -> Client {
        let (client_out, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, client_in) = tokio::io::duplex(1 << 20);
        tokio::spawn(crate::server::serve(server_in, server_out, None));
        Client {
            to_server: client_out,
            from_server: BufReader::new(client_in),
            next_id: 0,
            notifications: Vec::new(),
        }
    }

    async fn send(&mut self, message: Value) {
        let body = message.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.to_server.write_all(framed.as_bytes()).await.unwrap();
    }

    async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params })).await;
    }

    async fn receive(&mut self) -> Value {
        let read = async {
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                self.from_server.read_line(&mut line).await.unwrap();
                let line = line.trim();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length:") {
                    length = value.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            self.from_server.read_exact(&mut body).await.unwrap();
            serde_json::from_slice(&body).unwrap()
        };
        tokio::time::timeout(WAIT, read).await.expect("the server answers in time")
    }

    /// Sends a request and returns its result (requests from the server get `null`).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let message = self.receive().await;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                let id = message["id"].clone();
                self.send(json!({ "jsonrpc": "2.0", "id": id, "result": null })).await;
                continue;
            }
            self.notifications.push(message);
        }
    }

    async fn initialize(&mut self, options: Value) {
        let params = json!({ "capabilities": {}, "initializationOptions": options });
        self.request("initialize", params).await;
        self.notify("initialized", json!({})).await;
    }

    async fn open(&mut self, uri: &str, text: &str) {
        let document = json!({ "uri": uri, "languageId": "weft", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": document })).await;
    }

    async fn shutdown(mut self) {
        self.request("shutdown", Value::Null).await;
        self.notify("exit", Value::Null).await;
    }

    /// The `window/showMessage` notifications received so far.
    fn messages(&self) -> Vec<String> {
        self.notifications
            .iter()
            .filter(|n| n["method"] == "window/showMessage")
            .map(|n| {
                format!("{}: {}", n["params"]["type"], n["params"]["message"].as_str().unwrap())
            })
            .collect()
    }
}

/// A folder of its own for one test.
fn test_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-lsp-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Stand-in runners, written once before any test starts a process: a script written
/// while another thread forks can fail to start with "text file busy".
struct Runners {
    /// Checks its arguments and the plan, and answers `--json` with the input it read
    /// (one value) and made-up times.
    fake: PathBuf,
    /// Never answers.
    hanging: PathBuf,
    /// Never answers, after writing its process id to `pid-PID` beside itself.
    recording: PathBuf,
    pocl: PathBuf,
}

fn runners() -> &'static Runners {
    static RUNNERS: std::sync::OnceLock<Runners> = std::sync::OnceLock::new();
    RUNNERS.get_or_init(|| {
        let dir = test_dir("runners");
        let fake = dir.join("fake-weft-runner");
        write_script(
            &fake,
            r#"#!/bin/sh
[ "$1" = devices ] && { echo 'error: no OpenCL platform' >&2; exit 1; }
if [ "$1" != run ] || [ "$2" != --plan ] || [ "$4" != --json ]; then
  echo '{"error": "fake runner: unexpected arguments", "exit": 2}'; exit 2
fi
grep -q '"source"' "$3" || { echo '{"error": "fake runner: not a plan", "exit": 2}'; exit 2; }
input=$(cat | tr -d '\n')
printf '{"ok": "%s\\n", "wall_ns": 1500000, "kernels": [{"kernel": "k0", "ns": 700}, {"kernel": "k1", "ns": 300}], "device": "fake device"}\n' "$input"
"#,
        );
        let hanging = dir.join("hanging-runner");
        write_script(&hanging, "#!/bin/sh\n[ \"$1\" = devices ] && exit 1\nexec sleep 30\n");
        let recording = dir.join("recording-runner");
        write_script(
            &recording,
            "#!/bin/sh\n[ \"$1\" = devices ] && exit 1\necho $$ > \"$(dirname \"$0\")/pid-$$\"\nexec sleep 1000\n",
        );
        // Lists a POCL CPU device as `weft-runner devices --json` does.
        let pocl = dir.join("pocl-runner");
        write_script(
            &pocl,
            r#"#!/bin/sh
[ "$1" = devices ] && [ "$2" = --json ] || exit 2
echo '{"platforms":[{"platform":0,"name":"Portable Computing Language","vendor":"The pocl project","version":"OpenCL 3.0 PoCL","devices":[{"device":"0:0","name":"pthread-skylake-avx512-AMD EPYC","vendor":"AuthenticAMD","kind":"cpu","default":true}]}]}'
"#,
        );
        Runners { fake, hanging, recording, pocl }
    })
}

fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

const MAIN: &str = r#"-- ==
-- input { [1f32, 2f32, 3f32] }
-- output { [2f32, 4f32, 6f32] }
entry double (xs: [n]f32) : [n]f32 = map (\x -> x * 2f32) xs
"#;

fn position(line: u32, character: u32) -> Value {
    json!({ "line": line, "character": character })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernels_lenses_actions_and_a_gpu_run() {
    let runner = &runners().fake;
    let dir = test_dir("session");
    let uri = format!("file://{}/main.weft", dir.display());
    let mut client = Client::start();
    client.initialize(json!({ "runnerPath": runner, "diagnosticsDelayMs": 0 })).await;
    client.open(&uri, MAIN).await;
    let doc = json!({ "uri": uri });

    // The server lists its commands under names the VS Code client never registers.
    let lenses = client.request("textDocument/codeLens", json!({ "textDocument": doc })).await;
    let titles: Vec<String> = lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| format!("{} {}", l["command"]["title"], l["command"]["command"]))
        .collect();
    assert_eq!(
        titles,
        [
            r#""▶ Run" "weft.server.runEntry""#,
            r#""▶ Run on GPU" "weft.server.runOnGpu""#,
            r#""Show kernels" "weft.server.showKernel""#,
            r#""Profile" "weft.server.profile""#,
            // The predicted time: a title with nothing to run.
            r#""predicted 5.29 µs on NVIDIA H100 80GB HBM3 (model weft-cost v2, error not measured)" """#,
        ]
    );

    // Show generated kernel on `map`, and the whole program through the lens's command.
    let on_map = json!({ "textDocument": doc, "position": position(3, 38) });
    let kernel = client.request("weft/showKernel", on_map.clone()).await;
    assert_eq!(kernel["uri"], "weft-kernel:///main/double/double_map_0.cl");
    let text = kernel["text"].as_str().unwrap();
    assert!(text.contains("__kernel void double_map_0("), "{text}");
    // The kernel's lines in the view, linked to the `map` it computes (line 3 of MAIN).
    let link = &kernel["links"][0];
    assert_eq!(link["kernel"], "double_map_0", "{kernel}");
    let lines: Vec<&str> = text.lines().collect();
    let signature =
        lines.iter().position(|l| l.starts_with("__kernel void double_map_0(")).unwrap();
    let (start, end) =
        (link["lines"]["start"].as_u64().unwrap(), link["lines"]["end"].as_u64().unwrap());
    assert!(start as usize <= signature && signature < end as usize, "{link}");
    assert_eq!(lines[end as usize - 1], "}", "{link}");
    assert_eq!(link["sources"][0]["uri"], json!(uri), "{link}");
    assert_eq!(link["sources"][0]["range"]["start"]["line"], 3, "{link}");
    // Each line computing part of the source, linked to the expression it computes:
    // the multiplication's line to `x * 2f32` (line 3, columns 48 to 56).
    let multiply = lines.iter().position(|l| l.contains(" * 2e0f")).unwrap();
    let line_link = kernel["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line"] == multiply)
        .unwrap_or_else(|| panic!("line {multiply} is not linked: {kernel}"));
    assert_eq!(line_link["source"]["uri"], json!(uri), "{line_link}");
    assert_eq!(
        line_link["source"]["range"],
        json!({ "start": position(3, 48), "end": position(3, 56) }),
        "{line_link}"
    );
    let lens_command = &lenses[2]["command"];
    let program = client
        .request(
            "workspace/executeCommand",
            json!({ "command": lens_command["command"], "arguments": lens_command["arguments"] }),
        )
        .await;
    assert_eq!(program["uri"], "weft-kernel:///main/double.cl");
    assert!(
        program["text"]
            .as_str()
            .unwrap()
            .contains("// Generated by the Weft compiler for OpenCL C 1.2.")
    );

    // Hover on `map`: the kernel computing it, and its cost.
    let hover = client.request("textDocument/hover", on_map.clone()).await;
    let markdown = hover["contents"]["value"].as_str().unwrap();
    assert!(
        markdown
            .contains("**Kernel**: `double_map_0` — @grid: one work-item per run of 4 elements"),
        "{markdown}"
    );
    // A short summary: the prediction first (its interval, the device and why, the
    // sizes and where they come from), and where the derivation is.
    let after_type = markdown.split("```\n\n").nth(1).unwrap_or("");
    assert!(after_type.starts_with("**Predicted**: "), "{markdown}");
    assert!(markdown.contains("per launch of its kernel on `NVIDIA H100 80GB HBM3`"), "{markdown}");
    assert!(markdown.contains("at n = 3 (the test block's largest `input`)"), "{markdown}");
    // The H100's profile has no validation run of this model: no interval, said so.
    assert!(markdown.contains("5.29 µs (error not measured)"), "{markdown}");
    assert!(!markdown.contains("work `"), "{markdown}");
    assert!(markdown.contains("Weft: Show Hover Details"), "{markdown}");
    let details = client
        .request(
            "workspace/executeCommand",
            json!({ "command": "weft.server.hoverDetails", "arguments": [on_map] }),
        )
        .await;
    let text = details["text"].as_str().unwrap();
    assert!(text.contains("**Cost** of `double_map_0` (entry `double`): work"), "{text}");
    assert!(details["uri"].as_str().unwrap().ends_with(".md"), "{details}");

    // Code actions on the entry's name: make the strategy explicit, run on GPU.
    let on_name = json!({ "start": position(3, 8), "end": position(3, 8) });
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({ "textDocument": doc, "range": on_name, "context": { "diagnostics": [] } }),
        )
        .await;
    let actions = actions.as_array().unwrap();
    assert_eq!(actions[0]["title"], "Make strategy explicit (1 level)");
    let edit = &actions[0]["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "@grid");
    assert_eq!(edit["range"]["start"], position(3, 40));
    assert_eq!(actions[1]["title"], "Run `double` on GPU");
    assert_eq!(actions[2]["title"], "Profile `double` (cost graph)");
    assert_eq!(actions[2]["command"]["command"], "weft.server.profile");

    // Run on GPU through the action's command: the plan goes to the runner, the test
    // block's input on its stdin; the summary comes back and as a message.
    let command = &actions[1]["command"];
    let result = client
        .request(
            "workspace/executeCommand",
            json!({ "command": command["command"], "arguments": command["arguments"] }),
        )
        .await;
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["values"], json!([" [1f32, 2f32, 3f32] "]));
    assert_eq!(result["kernelNs"], 1000);
    // The fake runner echoes its input: not the test block's expected output.
    let message = "`double` on fake device:  [1f32, 2f32, 3f32] ; differs from the expected \
                   output: value #0: at index [0]: expected 2.0f32, got 1.0f32 (3 of 3 \
                   elements differ); kernels 1.0 µs (2 launches), wall 1.50 ms";
    assert_eq!(result["matched"], false);
    assert_eq!(result["message"], message);
    // The notification may follow the response.
    while client.messages().is_empty() {
        let notification = client.receive().await;
        client.notifications.push(notification);
    }
    assert_eq!(client.messages(), [format!("2: Weft: {message}")]);
    client.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpu_run_errors_are_messages() {
    let _ = runners();
    let dir = test_dir("errors");
    let uri = format!("file://{}/main.weft", dir.display());
    let missing = dir.join("no-such-runner");
    let mut client = Client::start();
    client.initialize(json!({ "runnerPath": missing, "diagnosticsDelayMs": 0 })).await;
    let source = format!("{MAIN}entry plain (xs: [n]f32) : [n]f32 = xs\n");
    client.open(&uri, &source).await;
    let run = |entry: &str| json!({ "command": "weft.server.runOnGpu", "arguments": [{ "uri": uri, "entry": entry }] });
    let no_runner = client.request("workspace/executeCommand", run("double")).await;
    assert_eq!(no_runner["ok"], false);
    let message = no_runner["message"].as_str().unwrap();
    assert!(message.starts_with("cannot start the OpenCL runner"), "{message}");
    let no_input = client.request("workspace/executeCommand", run("plain")).await;
    assert_eq!(
        no_input["message"],
        "`plain` has no inputs to run with: add a test block above it with `-- input { ... }` \
         or `-- random input { ... }`"
    );
    let no_entry = client.request("workspace/executeCommand", run("nope")).await;
    assert_eq!(no_entry["ok"], false);
    while client.messages().len() < 3 {
        let notification = client.receive().await;
        client.notifications.push(notification);
    }
    // Errors are shown as error messages (type 1).
    assert!(
        client.messages().iter().all(|m| m.starts_with("1: Weft: ")),
        "{:?}",
        client.messages()
    );
    client.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpu_run_is_stopped_at_the_time_limit() {
    let runner = &runners().hanging;
    let dir = test_dir("timeout");
    let uri = format!("file://{}/main.weft", dir.display());
    let mut client = Client::start();
    let options = json!({ "runnerPath": runner, "gpuRunTimeoutSecs": 1, "diagnosticsDelayMs": 0 });
    client.initialize(options).await;
    client.open(&uri, MAIN).await;
    let start = std::time::Instant::now();
    let arguments = json!([{ "uri": uri, "entry": "double" }]);
    let result = client
        .request(
            "workspace/executeCommand",
            json!({ "command": "weft.server.runOnGpu", "arguments": arguments }),
        )
        .await;
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(
        result["message"],
        "`double` (OpenCL) was stopped after 1 s (the time limit, `gpuRunTimeoutSecs`)"
    );
    client.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn materialise_in_local_memory_is_a_code_action() {
    let dir = test_dir("materialise");
    let uri = format!("file://{}/main.weft", dir.display());
    let mut client = Client::start();
    client.initialize(json!({ "diagnosticsDelayMs": 0 })).await;
    let source = "entry dist (a: [n][m]f32) : [n][m]f32 =\n  map@group (\\row ->\n      \
                  map@thread (\\x -> x * reduce@seq (+) 0f32 row) row)\n    a\n";
    client.open(&uri, source).await;
    let doc = json!({ "uri": uri });
    // On the `row` that `reduce@seq` reads whole in every work-item.
    let on_row = json!({ "start": position(2, 48), "end": position(2, 48) });
    let actions = client
        .request(
            "textDocument/codeAction",
            json!({ "textDocument": doc, "range": on_row, "context": { "diagnostics": [] } }),
        )
        .await;
    let action = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Materialise `row` in local memory")
        .unwrap_or_else(|| panic!("{actions}"));
    assert_eq!(action["kind"], "refactor.rewrite");
    let edit = &action["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "let row = to_local row\n      in ");
    assert_eq!(edit["range"]["start"], position(2, 6));
    assert_eq!(edit["range"]["end"], position(2, 6));
    client.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Process ids recorded by the `recording` runner.
fn recorded_pids() -> Vec<String> {
    let dir = runners().recording.parent().unwrap().to_owned();
    let mut pids: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("pid-").map(str::to_owned))
        .collect();
    pids.sort();
    pids
}

fn process_alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.split(") ").nth(1).is_some_and(|rest| rest.starts_with('Z')))
}

/// Four runs of a non-terminating entry once held every request slot, so a hover
/// waited for them; `$/cancelRequest` of a run left its process running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_runs_do_not_hold_reads_back_and_cancelling_kills_them() {
    let runner = &runners().recording;
    let dir = test_dir("cancel");
    let uri = format!("file://{}/main.weft", dir.display());
    let mut client = Client::start();
    let options =
        json!({ "runnerPath": runner, "gpuRunTimeoutSecs": 100_000, "diagnosticsDelayMs": 0 });
    client.initialize(options).await;
    client.open(&uri, MAIN).await;
    let before = recorded_pids();
    let runs: Vec<i64> = (1000..1006).collect();
    for &id in &runs {
        let arguments = json!([{ "uri": uri, "entry": "double" }]);
        client
            .send(json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": "workspace/executeCommand",
                "params": { "command": "weft.server.runOnGpu", "arguments": arguments },
            }))
            .await;
    }
    let started = tokio::time::timeout(WAIT, async {
        loop {
            let pids: Vec<String> =
                recorded_pids().into_iter().filter(|p| !before.contains(p)).collect();
            if pids.len() == runs.len() {
                return pids;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("every run starts");
    let hover = client
        .request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": position(3, 38) }),
        )
        .await;
    assert!(hover["contents"]["value"].as_str().is_some(), "{hover}");
    for &id in &runs {
        client.notify("$/cancelRequest", json!({ "id": id })).await;
    }
    let all_gone = tokio::time::timeout(WAIT, async {
        while started.iter().any(|pid| process_alive(pid)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(all_gone.is_ok(), "runs still alive after $/cancelRequest: {started:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn definition_of_a_prelude_function_opens_a_copy_of_the_prelude() {
    let dir = test_dir("prelude");
    let uri = format!("file://{}/main.weft", dir.display());
    let mut client = Client::start();
    client.initialize(json!({ "diagnosticsDelayMs": 0 })).await;
    client.open(&uri, "entry e (xs: [3]f32) : f32 = f32.sum (rotate 1 xs)\n").await;
    let doc = json!({ "uri": uri });
    for character in [30, 40] {
        let found = client
            .request(
                "textDocument/definition",
                json!({ "textDocument": doc, "position": position(0, character) }),
            )
            .await;
        let target = found[0]["uri"].as_str().unwrap().strip_prefix("file://").unwrap();
        assert!(target.ends_with("/prelude.weft"), "{found}");
        let text = std::fs::read_to_string(target).unwrap();
        assert_eq!(text, weft_hir::PRELUDE_TEXT);
        let line = found[0]["range"]["start"]["line"].as_u64().unwrap() as usize;
        let name = if character == 30 { "def f32.sum" } else { "def rotate" };
        assert!(text.lines().nth(line).unwrap().starts_with(name), "{found}");
    }
    client.shutdown().await;
}

/// The next `publishDiagnostics` for `version` of a document: (line, code) of each.
async fn next_publication(client: &mut Client, version: i64) -> Vec<(u64, String)> {
    loop {
        let message = client.receive().await;
        if message["method"] == "textDocument/publishDiagnostics"
            && message["params"]["version"] == json!(version)
        {
            return message["params"]["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    let line = d["range"]["start"]["line"].as_u64().unwrap();
                    (line, d["code"].as_str().unwrap().to_owned())
                })
                .collect();
        }
    }
}

/// The memory layer's diagnostics are published after the front end's (an edit in a body
/// recomputes the layout of the file's entries), and every later publication carries
/// them, moved through the edits since, so that typing does not blank them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn layout_diagnostics_come_second_and_move_with_edits() {
    let dir = test_dir("later-diagnostics");
    let uri = format!("file://{}/main.weft", dir.display());
    let mut client = Client::start();
    client.initialize(json!({ "diagnosticsDelayMs": 0, "perfDiagnostics": false })).await;
    let text = "entry f (a: [n][m]i32) : [m*n]i32 = flatten (transpose a)\n\
                def g (x: i32) : i32 = x + true\n";
    client.open(&uri, text).await;
    let type_error = (1, "type-mismatch".to_owned());
    assert_eq!(next_publication(&mut client, 1).await, vec![type_error.clone()]);
    let forced_copy = (0, "forced-copy".to_owned());
    assert_eq!(next_publication(&mut client, 1).await, vec![type_error, forced_copy]);
    // A line inserted above: the front end's diagnostics are recomputed, the forced copy
    // is carried one line down.
    let change = json!({
        "range": { "start": position(0, 0), "end": position(0, 0) },
        "text": "-- a comment\n",
    });
    client
        .notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [change] }),
        )
        .await;
    assert_eq!(
        next_publication(&mut client, 2).await,
        vec![(2, "type-mismatch".to_owned()), (1, "forced-copy".to_owned())]
    );
    client.shutdown().await;
}

/// Predictions once used the H100's profile on a machine without one: the server asks
/// `weft-runner devices` which device runs use and predicts with its profile, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predictions_use_the_device_runs_use() {
    for (options, device, why) in [
        (
            json!({ "runnerPath": runners().pocl, "diagnosticsDelayMs": 0 }),
            "pthread-haswell-AMD EPYC",
            "(the committed profile nearest `pthread-skylake-avx512-AMD EPYC`, the device \"Run on GPU\" uses)",
        ),
        (
            json!({ "runnerPath": runners().pocl, "device": "gpu", "diagnosticsDelayMs": 0 }),
            "NVIDIA H100 80GB HBM3",
            "(the default profile: no OpenCL device matches `gpu`)",
        ),
        (
            json!({ "runnerPath": runners().fake, "diagnosticsDelayMs": 0 }),
            "NVIDIA H100 80GB HBM3",
            "(the default profile: `weft-runner devices` found no OpenCL device (error: no OpenCL platform))",
        ),
        (
            json!({ "runnerPath": runners().pocl, "costProfile": "nvidia-h100", "diagnosticsDelayMs": 0 }),
            "NVIDIA H100 80GB HBM3",
            "(the `costProfile` setting)",
        ),
    ] {
        let dir = test_dir("device");
        let uri = format!("file://{}/main.weft", dir.display());
        let mut client = Client::start();
        client.initialize(options).await;
        client.open(&uri, MAIN).await;
        let on_map = json!({ "textDocument": { "uri": uri }, "position": position(3, 38) });
        let want = format!("on `{device}` {why}");
        let found = tokio::time::timeout(WAIT, async {
            loop {
                let hover = client.request("textDocument/hover", on_map.clone()).await;
                let markdown = hover["contents"]["value"].as_str().unwrap_or("").to_owned();
                if markdown.contains(&want) {
                    return markdown;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        assert!(found.is_ok(), "no hover says {want}");
        client.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}
