//! The tower-lsp-server `LanguageServer`: document notifications go to the owner
//! thread synchronously; requests become read jobs whose results come back on a
//! oneshot channel.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::Sender;
use lsp_types as lsp;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::jsonrpc::{self, ErrorCode};
use tower_lsp_server::{Client, LanguageServer, LspService, Server, UriExt as _};
use weft_ide::Analysis;

use crate::handlers::{
    self, HOVER_DETAILS, HandlerError, PROFILE, RUN_ENTRY, RUN_ON_GPU, SHOW_KERNEL,
};
use crate::main_loop::Task;
use crate::to_proto;

pub(crate) struct Backend {
    client: Client,
    owner: Sender<Task>,
    shut_down: Arc<AtomicBool>,
    config: std::sync::Mutex<crate::Config>,
}

/// Serves until `exit`; returns whether `shutdown` was received first.
/// Requests served at once; beyond it the server stops reading until one is answered.
const MAX_PENDING_REQUESTS: usize = 256;

/// `runner`: the `weft-runner` to use when the client's settings name none.
pub(crate) async fn serve(
    input: impl AsyncRead + Unpin,
    output: impl AsyncWrite,
    runner: Option<std::path::PathBuf>,
) -> bool {
    let shut_down = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&shut_down);
    let runtime = tokio::runtime::Handle::current();
    let builder = LspService::build(move |client: Client| Backend {
        owner: crate::main_loop::start(client.clone(), runtime.clone()),
        client,
        shut_down: flag,
        config: std::sync::Mutex::new(crate::Config {
            runner_from_environment: runner.clone(),
            ..crate::Config::default()
        }),
    })
    .custom_method("weft/showKernel", Backend::show_kernel);
    #[cfg(debug_assertions)]
    let builder = builder.custom_method("weft/debug/documentText", Backend::document_text);
    let (service, socket) = builder.finish();
    // tower-lsp-server serves four requests at a time by default, and stops reading
    // when they are all pending: four long runs kept a hover waiting. Runs wait on their
    // own threads, so many may be pending without holding reads back.
    Server::new(input, output, socket).concurrency_level(MAX_PENDING_REQUESTS).serve(service).await;
    shut_down.load(Ordering::SeqCst)
}

impl Backend {
    fn send(&self, task: Task) {
        // Fails only when the owner thread is gone (the process is ending).
        let _ = self.owner.send(task);
    }

    /// Runs `f` on a snapshot in the pool; cancellation becomes ContentModified.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Analysis) -> handlers::Result<T> + Send + 'static,
    ) -> jsonrpc::Result<T> {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        self.send(Task::Read(Box::new(move |analysis: Analysis| {
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| f(&analysis)));
            // Drop the snapshot before answering, so a waiting edit goes ahead.
            drop(analysis);
            let _ = sender.send(result);
        })));
        match receiver.await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(HandlerError::Cancelled))) => Err(jsonrpc::Error {
                code: ErrorCode::ContentModified,
                message: "content modified".into(),
                data: None,
            }),
            Ok(Ok(Err(HandlerError::Invalid(message)))) => {
                Err(jsonrpc::Error::invalid_params(message))
            }
            Ok(Err(_panic)) => Err(jsonrpc::Error {
                code: ErrorCode::InternalError,
                message: "internal error: the request panicked (a bug in the Weft server)".into(),
                data: None,
            }),
            Err(_) => Err(jsonrpc::Error::internal_error()),
        }
    }

    /// `weft/showKernel`: the OpenCL of the kernels computing the code at a position.
    async fn show_kernel(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> jsonrpc::Result<Option<Value>> {
        self.read(move |analysis| handlers::show_kernel(analysis, &params)).await
    }

    /// `weft.server.showKernel [{ textDocument, position }]` (the "Show kernels" lens).
    async fn show_kernel_command(&self, arguments: Vec<Value>) -> jsonrpc::Result<Option<Value>> {
        let argument = arguments.into_iter().next().unwrap_or(Value::Null);
        let params: lsp::TextDocumentPositionParams = serde_json::from_value(argument)
            .map_err(|_| jsonrpc::Error::invalid_params("expected [{ textDocument, position }]"))?;
        self.show_kernel(params).await
    }

    /// `weft.server.runOnGpu [{ uri, entry }]`: compiles the entry in a read (the snapshot
    /// is dropped before the run), runs its plan in `weft-runner` on a blocking thread,
    /// shows a summary with `window/showMessage` and answers the whole result.
    async fn run_on_gpu(&self, arguments: Vec<Value>) -> jsonrpc::Result<Option<Value>> {
        let argument = arguments.into_iter().next().unwrap_or(Value::Null);
        let uri =
            argument.get("uri").and_then(Value::as_str).and_then(|s| s.parse::<lsp::Uri>().ok());
        let entry = argument.get("entry").and_then(Value::as_str).map(str::to_owned);
        let (Some(uri), Some(entry)) = (uri, entry) else {
            return Err(jsonrpc::Error::invalid_params("expected [{ uri, entry }]"));
        };
        let lookup_entry = entry.clone();
        let planned =
            self.read(move |analysis| handlers::gpu_run(analysis, &uri, &lookup_entry)).await?;
        let result = match planned {
            Err(message) => crate::runner::GpuRunResult::failed(&entry, message),
            Ok(run) => {
                let options = {
                    let config = self.config.lock().map(|c| c.clone()).unwrap_or_default();
                    crate::runner::GpuRunOptions {
                        runner: config.runner(),
                        device: config.device,
                        timeout: config.gpu_run_timeout,
                    }
                };
                let cancel = crate::runner::CancelOnDrop::new();
                let flag = cancel.flag();
                let result = tokio::task::spawn_blocking(move || {
                    crate::runner::run_on_gpu(&run, &options, &flag)
                })
                .await
                .map_err(|_| jsonrpc::Error::internal_error())?;
                drop(cancel);
                result
            }
        };
        let kind = message_type(result.ok, result.matched);
        self.client.show_message(kind, format!("Weft: {}", result.message)).await;
        Ok(Some(serde_json::to_value(result).unwrap_or(Value::Null)))
    }

    /// Asks `weft-runner devices` which device runs use, off the request path, and
    /// hands the answer to the owner thread: predictions then use that device's profile
    /// (unless the `costProfile` setting names one). Lenses are asked for again when the
    /// client can be told to.
    fn detect_device(&self, capabilities: &lsp::ClientCapabilities) {
        let config = self.config.lock().map(|c| c.clone()).unwrap_or_default();
        if config.cost_profile.is_some() {
            return;
        }
        let (runner, spec) = (config.runner(), config.device_spec());
        let owner = self.owner.clone();
        let client = self.client.clone();
        let refresh = capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        tokio::spawn(async move {
            let found = tokio::task::spawn_blocking(move || {
                crate::runner::detect_device(&runner, spec.as_deref())
            })
            .await
            .unwrap_or_else(|_| crate::runner::Detected {
                device: Err("looking for the device failed".to_owned()),
                other: None,
            });
            // Fails only when the owner thread is gone (the process is ending).
            let _ = owner.send(Task::DeviceFound(found));
            if refresh {
                let _ = client.code_lens_refresh().await;
            }
        });
    }

    #[cfg(debug_assertions)]
    async fn document_text(
        &self,
        params: lsp::TextDocumentIdentifier,
    ) -> jsonrpc::Result<Option<String>> {
        self.read(move |analysis| handlers::document_text(analysis, &params.uri)).await
    }

    /// `weft.server.profile [{ uri, entry }]`: runs `weft profile` on the entry (out of
    /// process, with the inputs "Run on GPU" would use), shows a summary with
    /// `window/showMessage` and answers `{ ok, svg, dot, dir, report, message, .. }`;
    /// the client opens `svg`.
    async fn profile(&self, arguments: Vec<Value>) -> jsonrpc::Result<Option<Value>> {
        let argument = arguments.into_iter().next().unwrap_or(Value::Null);
        let uri =
            argument.get("uri").and_then(Value::as_str).and_then(|s| s.parse::<lsp::Uri>().ok());
        let entry = argument.get("entry").and_then(Value::as_str).map(str::to_owned);
        let (Some(uri), Some(entry)) = (uri, entry) else {
            return Err(jsonrpc::Error::invalid_params("expected [{ uri, entry }]"));
        };
        let Some(file) = uri.to_file_path().map(|p| p.into_owned()) else {
            return Err(jsonrpc::Error::invalid_params("only files on disk can be profiled"));
        };
        let lookup_entry = entry.clone();
        let input =
            self.read(move |analysis| handlers::entry_input(analysis, &uri, &lookup_entry)).await?;
        let timeout = self.config.lock().map(|c| c.profile_timeout).unwrap_or_default();
        let Some(exe) = crate::runner::current_exe() else {
            return Err(jsonrpc::Error::internal_error());
        };
        let result = match input {
            Err(message) => {
                let mut failed = crate::runner::profile_failed(&file, &entry);
                failed.message = message;
                failed
            }
            Ok(input) => {
                let cancel = crate::runner::CancelOnDrop::new();
                let flag = cancel.flag();
                let result = tokio::task::spawn_blocking(move || {
                    crate::runner::profile_entry(&exe, &file, &entry, &input, timeout, &flag)
                })
                .await
                .map_err(|_| jsonrpc::Error::internal_error())?;
                drop(cancel);
                result
            }
        };
        let kind = if result.ok { lsp::MessageType::INFO } else { lsp::MessageType::ERROR };
        self.client.show_message(kind, format!("Weft: {}", result.message)).await;
        Ok(Some(serde_json::to_value(result).unwrap_or(Value::Null)))
    }

    async fn run_entry(&self, arguments: Vec<Value>) -> jsonrpc::Result<Option<Value>> {
        let argument = arguments.into_iter().next().unwrap_or(Value::Null);
        let uri =
            argument.get("uri").and_then(Value::as_str).and_then(|s| s.parse::<lsp::Uri>().ok());
        let entry = argument.get("entry").and_then(Value::as_str).map(str::to_owned);
        let (Some(uri), Some(entry)) = (uri, entry) else {
            return Err(jsonrpc::Error::invalid_params("expected [{ uri, entry }]"));
        };
        let Some(file) = uri.to_file_path().map(|p| p.into_owned()) else {
            return Err(jsonrpc::Error::invalid_params("only files on disk can be run"));
        };
        let lookup_entry = entry.clone();
        // The snapshot is dropped before the run starts.
        let planned =
            self.read(move |analysis| handlers::entry_run(analysis, &uri, &lookup_entry)).await?;
        let run = match planned {
            Ok(run) => run,
            Err(message) => {
                self.client.show_message(lsp::MessageType::ERROR, format!("Weft: {message}")).await;
                return Err(jsonrpc::Error::invalid_params(message));
            }
        };
        let timeout = self.config.lock().map(|c| c.run_timeout).unwrap_or_default();
        let Some(exe) = crate::runner::current_exe() else {
            return Err(jsonrpc::Error::internal_error());
        };
        let cancel = crate::runner::CancelOnDrop::new();
        let flag = cancel.flag();
        let result = tokio::task::spawn_blocking(move || {
            crate::runner::run_entry(&exe, &file, &entry, &run, timeout, &flag)
        })
        .await
        .map_err(|_| jsonrpc::Error::internal_error())?;
        drop(cancel);
        let kind = message_type(result.ok, result.matched);
        self.client.show_message(kind, format!("Weft: {}", result.message)).await;
        Ok(Some(serde_json::to_value(result).unwrap_or(Value::Null)))
    }
}

/// How a run's summary is shown: an error when it failed, a warning when its values
/// differ from the test block's expected output.
fn message_type(ok: bool, matched: Option<bool>) -> lsp::MessageType {
    match (ok, matched) {
        (false, _) => lsp::MessageType::ERROR,
        (true, Some(false)) => lsp::MessageType::WARNING,
        (true, _) => lsp::MessageType::INFO,
    }
}

fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(lsp::PositionEncodingKind::UTF16),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..lsp::TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
        })),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        workspace_symbol_provider: Some(lsp::OneOf::Left(true)),
        semantic_tokens_provider: Some(
            lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp::SemanticTokensOptions {
                    legend: lsp::SemanticTokensLegend {
                        token_types: to_proto::TOKEN_TYPES.to_vec(),
                        token_modifiers: to_proto::TOKEN_MODIFIERS.to_vec(),
                    },
                    full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
                    range: None,
                    work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
                },
            ),
        ),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec!["@".to_owned()]),
            ..lsp::CompletionOptions::default()
        }),
        signature_help_provider: Some(lsp::SignatureHelpOptions {
            trigger_characters: Some(vec![" ".to_owned(), "(".to_owned()]),
            ..lsp::SignatureHelpOptions::default()
        }),
        inlay_hint_provider: Some(lsp::OneOf::Left(true)),
        folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Simple(true)),
        code_lens_provider: Some(lsp::CodeLensOptions { resolve_provider: Some(false) }),
        document_formatting_provider: Some(lsp::OneOf::Left(true)),
        execute_command_provider: Some(lsp::ExecuteCommandOptions {
            commands: vec![
                RUN_ENTRY.to_owned(),
                RUN_ON_GPU.to_owned(),
                SHOW_KERNEL.to_owned(),
                PROFILE.to_owned(),
                HOVER_DETAILS.to_owned(),
            ],
            ..lsp::ExecuteCommandOptions::default()
        }),
        ..lsp::ServerCapabilities::default()
    }
}

impl LanguageServer for Backend {
    async fn initialize(
        &self,
        params: lsp::InitializeParams,
    ) -> jsonrpc::Result<lsp::InitializeResult> {
        #[expect(deprecated, reason = "older clients send only rootUri")]
        let root_uri = params
            .workspace_folders
            .as_ref()
            .and_then(|folders| folders.first())
            .map(|folder| folder.uri.clone())
            .or(params.root_uri.clone());
        let root = root_uri.and_then(|uri| uri.to_file_path().map(|p| p.into_owned()));
        let options = params.initialization_options;
        // The project's `weft.json` decides over the editor's settings (main_loop applies
        // it per folder); one that cannot be read is said once.
        if let Some(Err(error)) = root.as_deref().map(crate::project::find_project_config) {
            let message = format!("Weft: {error}; the editor's settings are used");
            self.client.show_message(lsp::MessageType::WARNING, message).await;
        }
        if let (Some(options), Ok(mut config)) = (&options, self.config.lock()) {
            config.update(options);
        }
        self.send(Task::Configure { root, options });
        self.detect_device(&params.capabilities);
        Ok(lsp::InitializeResult {
            capabilities: capabilities(),
            server_info: Some(lsp::ServerInfo {
                name: "weft".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
        })
    }

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    // Document notifications: plain `fn`s returning a ready future, so the edit is
    // queued when tower calls the handler, in arrival order.
    fn did_open(&self, params: lsp::DidOpenTextDocumentParams) -> impl Future<Output = ()> + Send {
        let document = params.text_document;
        self.send(Task::Open { uri: document.uri, text: document.text, version: document.version });
        async {}
    }

    fn did_change(
        &self,
        params: lsp::DidChangeTextDocumentParams,
    ) -> impl Future<Output = ()> + Send {
        self.send(Task::Change {
            uri: params.text_document.uri,
            changes: params.content_changes,
            version: params.text_document.version,
        });
        async {}
    }

    fn did_close(
        &self,
        params: lsp::DidCloseTextDocumentParams,
    ) -> impl Future<Output = ()> + Send {
        self.send(Task::Close { uri: params.text_document.uri });
        async {}
    }

    fn did_change_watched_files(
        &self,
        params: lsp::DidChangeWatchedFilesParams,
    ) -> impl Future<Output = ()> + Send {
        self.send(Task::DiskChanged { uris: params.changes.into_iter().map(|c| c.uri).collect() });
        async {}
    }

    async fn did_save(&self, _params: lsp::DidSaveTextDocumentParams) {}

    async fn hover(&self, params: lsp::HoverParams) -> jsonrpc::Result<Option<lsp::Hover>> {
        self.read(move |a| handlers::hover(a, &params)).await
    }

    async fn goto_definition(
        &self,
        params: lsp::GotoDefinitionParams,
    ) -> jsonrpc::Result<Option<lsp::GotoDefinitionResponse>> {
        self.read(move |a| handlers::goto_definition(a, &params)).await
    }

    async fn references(
        &self,
        params: lsp::ReferenceParams,
    ) -> jsonrpc::Result<Option<Vec<lsp::Location>>> {
        self.read(move |a| handlers::references(a, &params)).await
    }

    async fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> jsonrpc::Result<Option<lsp::PrepareRenameResponse>> {
        self.read(move |a| handlers::prepare_rename(a, &params)).await
    }

    async fn rename(
        &self,
        params: lsp::RenameParams,
    ) -> jsonrpc::Result<Option<lsp::WorkspaceEdit>> {
        self.read(move |a| handlers::rename(a, &params)).await
    }

    async fn document_symbol(
        &self,
        params: lsp::DocumentSymbolParams,
    ) -> jsonrpc::Result<Option<lsp::DocumentSymbolResponse>> {
        self.read(move |a| handlers::document_symbols(a, &params)).await
    }

    async fn symbol(
        &self,
        params: lsp::WorkspaceSymbolParams,
    ) -> jsonrpc::Result<Option<lsp::OneOf<Vec<lsp::SymbolInformation>, Vec<lsp::WorkspaceSymbol>>>>
    {
        let symbols = self.read(move |a| handlers::workspace_symbols(a, &params)).await?;
        Ok(symbols.map(lsp::OneOf::Left))
    }

    async fn semantic_tokens_full(
        &self,
        params: lsp::SemanticTokensParams,
    ) -> jsonrpc::Result<Option<lsp::SemanticTokensResult>> {
        self.read(move |a| handlers::semantic_tokens(a, &params)).await
    }

    async fn completion(
        &self,
        params: lsp::CompletionParams,
    ) -> jsonrpc::Result<Option<lsp::CompletionResponse>> {
        self.read(move |a| handlers::completion(a, &params)).await
    }

    async fn signature_help(
        &self,
        params: lsp::SignatureHelpParams,
    ) -> jsonrpc::Result<Option<lsp::SignatureHelp>> {
        self.read(move |a| handlers::signature_help(a, &params)).await
    }

    async fn inlay_hint(
        &self,
        params: lsp::InlayHintParams,
    ) -> jsonrpc::Result<Option<Vec<lsp::InlayHint>>> {
        self.read(move |a| handlers::inlay_hints(a, &params)).await
    }

    async fn folding_range(
        &self,
        params: lsp::FoldingRangeParams,
    ) -> jsonrpc::Result<Option<Vec<lsp::FoldingRange>>> {
        self.read(move |a| handlers::folding_ranges(a, &params)).await
    }

    async fn code_action(
        &self,
        params: lsp::CodeActionParams,
    ) -> jsonrpc::Result<Option<lsp::CodeActionResponse>> {
        self.read(move |a| handlers::code_actions(a, &params)).await
    }

    async fn code_lens(
        &self,
        params: lsp::CodeLensParams,
    ) -> jsonrpc::Result<Option<Vec<lsp::CodeLens>>> {
        self.read(move |a| handlers::code_lenses(a, &params)).await
    }

    async fn formatting(
        &self,
        params: lsp::DocumentFormattingParams,
    ) -> jsonrpc::Result<Option<Vec<lsp::TextEdit>>> {
        let (edits, note) = self.read(move |a| handlers::formatting(a, &params)).await?;
        // What was not formatted, and why: a file never stays silently unformatted.
        if let Some(note) = note {
            self.client.show_message(lsp::MessageType::WARNING, format!("Weft: {note}")).await;
        }
        Ok(edits)
    }

    async fn execute_command(
        &self,
        params: lsp::ExecuteCommandParams,
    ) -> jsonrpc::Result<Option<Value>> {
        match params.command.as_str() {
            RUN_ENTRY => return self.run_entry(params.arguments).await,
            RUN_ON_GPU => return self.run_on_gpu(params.arguments).await,
            PROFILE => return self.profile(params.arguments).await,
            SHOW_KERNEL => return self.show_kernel_command(params.arguments).await,
            HOVER_DETAILS => {
                let argument = params.arguments.into_iter().next().unwrap_or(Value::Null);
                let position: lsp::TextDocumentPositionParams = serde_json::from_value(argument)
                    .map_err(|_| {
                        jsonrpc::Error::invalid_params("expected [{ textDocument, position }]")
                    })?;
                return self.read(move |a| handlers::hover_details(a, &position)).await;
            }
            _ => {}
        }
        Err(jsonrpc::Error::invalid_params(format!("unknown command `{}`", params.command)))
    }
}
