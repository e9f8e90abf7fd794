-- Headless test of the Weft Neovim plugin against a language server.
--
-- Run through test/run.sh. Everything comes from the environment, so the same script
-- tests the fake server (test/fake_server.py) now and the real `weft lsp` later:
--
--   WEFT_LSP_CMD            server command, words separated by spaces (required)
--   WEFT_TEST_FILE          the .weft file to open (required)
--   WEFT_TEST_FILE2         optional second file under the same root: must share the client
--   WEFT_ROOT_MARKERS       optional, comma-separated root markers for setup()
--   WEFT_EXPECT_ROOT        optional, the root folder the client must get
--   WEFT_TIMEOUT_MS         per wait, default 10000
--   WEFT_EXPECT_DIAGNOSTIC  text that some published diagnostic's message must contain
--                           ('' = any publishDiagnostics for the file will do;
--                           'NONE' = the first publish must have no diagnostics)
--   WEFT_HOVER_POS          LINE:COL (1-based, COL in bytes as in the ruler)
--   WEFT_EXPECT_HOVER       text the hover must contain
--   WEFT_DEFINITION_POS     LINE:COL where to ask for the definition
--   WEFT_EXPECT_DEFINITION  LINE:COL (1-based) where the definition must start; may be
--                           prefixed by a file name it must end with: other.weft:3:7
--   WEFT_RUN_POS            LINE:COL for :WeftRun;  WEFT_EXPECT_RUN  text in its buffer
--   WEFT_GPU_RUN_POS        LINE:COL for :WeftRunGpu;  WEFT_EXPECT_GPU_RUN  text in its buffer
--   WEFT_KERNEL_POS         LINE:COL for :WeftShowKernel;  WEFT_EXPECT_KERNEL  text in it
--   WEFT_EXPECT_KERNEL_LINKS  1 = its lines are coloured as the source lines they compute,
--                           the cursor links them both ways, and an edit refreshes it
--   WEFT_PROFILE_POS        LINE:COL for :WeftProfile;  WEFT_EXPECT_PROFILE  text in its
--                           buffer; the SVG it opens must end with summary.svg, the
--                           summarised cost graph (and exist
--                           when WEFT_PROFILE_SVG_EXISTS=1)
--   WEFT_TEST_RESTART       1 = check that :WeftRestart starts a new client
--
-- Prints one PASS/FAIL line per check, then "N passed, N failed", and exits non-zero
-- when a check failed.

local env = vim.env
local timeout = tonumber(env.WEFT_TIMEOUT_MS or '') or 10000
local passed, failed = 0, 0

local function out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    out('PASS ' .. name)
  else
    failed = failed + 1
    out('FAIL ' .. name .. (detail and (': ' .. detail) or ''))
  end
  return ok
end

local function finish()
  out(string.format('%d passed, %d failed', passed, failed))
  if failed > 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

local function words(s)
  local t = {}
  for w in (s or ''):gmatch('%S+') do
    t[#t + 1] = w
  end
  return t
end

local function pos(s)
  local l, c = (s or ''):match('^(%d+):(%d+)$')
  if l then
    return tonumber(l), tonumber(c)
  end
end

local function set_cursor(spec)
  local l, c = pos(spec)
  vim.api.nvim_win_set_cursor(0, { l, c - 1 })
end

local function fail_fast(msg)
  check(msg, false)
  finish()
end

-- The highlight groups of `ns` on 0-based `line` of `buf`.
local function groups_at(buf, ns, line)
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, { line, 0 }, { line, -1 }, { details = true })) do
    out[#out + 1] = m[4].hl_group
  end
  return out
end

-- The kernel view `kb` (asked for from `source`): its linked lines are coloured as the
-- source lines they compute (two source lines, two colours), the cursor on a linked line
-- marks the source expression, the cursor on a source line marks the view's lines, and
-- an edit of the source asks for the view again.
local function check_kernel_links(weft, kb, source)
  local view = weft.views[kb]
  local links = view and view.lines or {}
  check('the kernel view has linked lines', #links > 0, vim.inspect(view))
  local link
  for _, l in ipairs(links) do
    if vim.uri_to_bufnr(l.source.uri) == source then
      link = link or l
    end
  end
  if not check('a kernel line is linked to the open source', link ~= nil, vim.inspect(links)) then
    return
  end
  local kgroups = groups_at(kb, weft.link_namespace, link.line)
  local sgroups = groups_at(source, weft.link_namespace, link.source.range.start.line)
  check('the linked kernel line and its source line share a colour',
    #kgroups > 0 and vim.tbl_contains(sgroups, kgroups[1]) and kgroups[1]:match('^WeftLink%d$') ~= nil,
    vim.inspect({ kernel = kgroups, source = sgroups }))
  local colours = {}
  for _, l in ipairs(links) do
    local key = l.source.uri .. '#' .. l.source.range.start.line
    colours[key] = groups_at(kb, weft.link_namespace, l.line)[1]
  end
  local distinct, seen = 0, {}
  for _, g in pairs(colours) do
    if g and not seen[g] then
      seen[g] = true
      distinct = distinct + 1
    end
  end
  check('lines computing different source lines get different colours',
    distinct == math.min(vim.tbl_count(colours), #weft.link_groups), vim.inspect(colours))
  -- The cursor on the kernel line marks the source expression it computes.
  local kwin = vim.fn.bufwinid(kb)
  vim.api.nvim_set_current_win(kwin)
  vim.api.nvim_win_set_cursor(kwin, { link.line + 1, 0 })
  vim.cmd('doautocmd <nomodeline> CursorMoved')
  check('the cursor on a kernel line marks its source expression',
    vim.tbl_contains(groups_at(source, weft.focus_namespace, link.source.range.start.line), 'WeftLinkFocus'),
    vim.inspect(groups_at(source, weft.focus_namespace, link.source.range.start.line)))
  -- The cursor on the source line marks the kernel lines computing it.
  local swin = vim.fn.bufwinid(source)
  if swin ~= -1 then
    vim.api.nvim_set_current_win(swin)
    vim.api.nvim_win_set_cursor(swin, { link.source.range.start.line + 1, 0 })
    vim.cmd('doautocmd <nomodeline> CursorMoved')
    check('the cursor on a source line marks the kernel lines computing it',
      vim.tbl_contains(groups_at(kb, weft.focus_namespace, link.line), 'WeftLinkFocus'),
      vim.inspect(groups_at(kb, weft.focus_namespace, link.line)))
  end
  -- An edit of the source: the view is asked for again (its buffer is rewritten).
  local tick = vim.api.nvim_buf_get_changedtick(kb)
  local n = vim.api.nvim_buf_line_count(source)
  vim.api.nvim_buf_set_lines(source, n, n, false, { '-- an edit' })
  vim.api.nvim_exec_autocmds('TextChanged', { buffer = source })
  local refreshed = vim.wait(timeout, function()
    return vim.api.nvim_buf_get_changedtick(kb) ~= tick
  end, 20)
  check('an edit of the source asks for the kernel view again', refreshed)
  vim.api.nvim_buf_set_lines(source, n, n + 1, false, {})
  vim.api.nvim_buf_set_option(source, 'modified', false)
end

-- Run the whole test inside a protected call, so that an error is a FAIL, not a hang.
local function main()
  local cmd = words(env.WEFT_LSP_CMD)
  if #cmd == 0 then
    return fail_fast('WEFT_LSP_CMD is set')
  end
  local file = env.WEFT_TEST_FILE
  if not file or file == '' or vim.fn.filereadable(file) ~= 1 then
    return fail_fast('WEFT_TEST_FILE names a readable file')
  end

  -- Record every publishDiagnostics before the client exists.
  local published = {}
  local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
  vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, result, ctx, config)
    if result and result.uri then
      local fname = vim.uri_to_fname(result.uri)
      published[fname] = published[fname] or {}
      table.insert(published[fname], result.diagnostics or {})
    end
    return default_publish(err, result, ctx, config)
  end

  vim.cmd('filetype plugin indent on')
  vim.cmd('syntax on')

  local weft = require('weft')

  -- A run's values are printed once (its stdout is what they were read from), and
  -- whether they matched the test block's expected output is said.
  local run_lines = weft.format_run_result('dot', {
    ok = true, values = { '22.0f32' }, stdout = '22.0f32\n', message = 'm',
    timeMs = 5, expected = '11f32', matched = false,
  })
  local shown = 0
  for _, l in ipairs(run_lines) do
    if l == '22.0f32' then
      shown = shown + 1
    end
  end
  check('a run prints each value once', shown == 1, table.concat(run_lines, ' | '))
  check('a run says its values differ from the expected output',
    vim.tbl_contains(run_lines, 'expected: 11f32')
      and vim.tbl_contains(run_lines, 'DIFFERS from the expected output, done in 5 ms'),
    table.concat(run_lines, ' | '))

  local opts = { cmd = cmd }
  if env.WEFT_ROOT_MARKERS and env.WEFT_ROOT_MARKERS ~= '' then
    opts.root_markers = vim.split(env.WEFT_ROOT_MARKERS, ',', true)
  end
  local attached = {}
  opts.on_attach = function(client, bufnr)
    attached[#attached + 1] = { client = client.id, bufnr = bufnr }
  end
  weft.setup(opts)

  -- Filetype, ftplugin and syntax.
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  check('filetype is weft', vim.bo.filetype == 'weft', 'got ' .. vim.inspect(vim.bo.filetype))
  check("commentstring is '-- %s'", vim.bo.commentstring == '-- %s', vim.bo.commentstring)
  check("iskeyword has the prime (')", vim.fn.matchstr("x' + 1", '\\k\\+') == "x'", vim.bo.iskeyword)
  check('syntax is loaded', vim.b.current_syntax == 'weft', vim.inspect(vim.b.current_syntax))
  for _, c in ipairs({ 'WeftRun', 'WeftRunGpu', 'WeftProfile', 'WeftShowKernel', 'WeftRestart',
    'WeftFormat', 'WeftLens', 'WeftDetails' }) do
    check(':' .. c .. ' exists', vim.fn.exists(':' .. c) == 2)
  end

  -- :help weft works without running :helptags (its tags file is committed), and that
  -- file is what :helptags writes for the help as it is now.
  local help_ok, help_err = pcall(vim.cmd, 'help weft')
  check(':help weft opens the plugin help',
    help_ok and vim.fn.expand('%:t') == 'weft.txt', help_ok and vim.fn.expand('%:t') or help_err)
  if help_ok then
    vim.cmd('helpclose')
  end
  local doc = vim.api.nvim_get_runtime_file('doc/weft.txt', false)[1]
  local fresh = vim.fn.tempname()
  vim.fn.mkdir(fresh, 'p')
  vim.fn.writefile(vim.fn.readfile(doc), fresh .. '/weft.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(fresh))
  local committed = vim.fn.fnamemodify(doc, ':h') .. '/tags'
  check('doc/tags is what :helptags writes',
    vim.fn.filereadable(committed) == 1
      and vim.deep_equal(vim.fn.readfile(committed), vim.fn.readfile(fresh .. '/tags')),
    'run: nvim --headless -u NONE -c "helptags editors/nvim/doc" -c q')

  -- The client starts with the given command and initializes.
  local function weft_client(buf)
    local clients = vim.fn.has('nvim-0.10') == 1 and vim.lsp.get_clients({ bufnr = buf, name = 'weft' })
      or vim.tbl_filter(function(c)
        return c.name == 'weft'
      end, vim.tbl_values(vim.lsp.buf_get_clients(buf)))
    return clients[1]
  end
  local started = vim.wait(timeout, function()
    local c = weft_client(bufnr)
    return c ~= nil and c.initialized == true
  end, 20)
  local client = weft_client(bufnr)
  if not check('client attaches and initializes', started and client ~= nil,
    client and 'not initialized in time' or 'no client attached') then
    return finish()
  end
  check('client runs the given command', vim.deep_equal(client.config.cmd, cmd),
    vim.inspect(client.config.cmd) .. ' vs ' .. vim.inspect(cmd))
  check('on_attach was called', #attached > 0 and attached[1].bufnr == bufnr)
  if (client.server_capabilities or {}).completionProvider then
    check("'omnifunc' completes from the server",
      vim.bo[bufnr].omnifunc == 'v:lua.vim.lsp.omnifunc', vim.bo[bufnr].omnifunc)
  end
  check('server commands are handled in the client',
    type(client.commands['weft.server.runEntry']) == 'function'
      and type(client.commands['weft.server.runOnGpu']) == 'function'
      and type(client.commands['weft.server.showKernel']) == 'function'
      and type(client.commands['weft.server.profile']) == 'function')
  if env.WEFT_EXPECT_ROOT and env.WEFT_EXPECT_ROOT ~= '' then
    local want = vim.fn.fnamemodify(env.WEFT_EXPECT_ROOT, ':p'):gsub('/$', '')
    check('client root is ' .. want, client.config.root_dir == want, client.config.root_dir)
  end

  -- Diagnostics.
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local got = vim.wait(timeout, function()
    return published[fname] ~= nil
  end, 20)
  if check('publishDiagnostics arrives for the file', got) then
    local want = env.WEFT_EXPECT_DIAGNOSTIC or ''
    local messages = {}
    for _, batch in ipairs(published[fname]) do
      for _, d in ipairs(batch) do
        messages[#messages + 1] = d.message
      end
    end
    if want == 'NONE' then
      check('no diagnostics', #published[fname][1] == 0, vim.inspect(messages))
    elseif want ~= '' then
      local found = false
      for _, m in ipairs(messages) do
        found = found or m:find(want, 1, true) ~= nil
      end
      check('a diagnostic says ' .. vim.inspect(want), found, 'got ' .. vim.inspect(messages))
      local in_buffer = false
      for _, d in ipairs(vim.diagnostic.get(bufnr)) do
        in_buffer = in_buffer or d.message:find(want, 1, true) ~= nil
      end
      check('the diagnostic is shown in the buffer', in_buffer)
    end
  end

  local function request(method, params)
    local responses = vim.lsp.buf_request_sync(bufnr, method, params, timeout)
    for _, r in pairs(responses or {}) do
      if r.error then
        return nil, r.error.message
      end
      return r.result
    end
    return nil, 'no response'
  end

  -- Hover.
  if env.WEFT_HOVER_POS and env.WEFT_HOVER_POS ~= '' then
    set_cursor(env.WEFT_HOVER_POS)
    local result, err = request('textDocument/hover', vim.lsp.util.make_position_params(0, client.offset_encoding))
    local text = ''
    if result and result.contents then
      text = table.concat(vim.lsp.util.convert_input_to_markdown_lines(result.contents), '\n')
    end
    local want = env.WEFT_EXPECT_HOVER or ''
    check('hover at ' .. env.WEFT_HOVER_POS .. ' says ' .. vim.inspect(want),
      result ~= nil and text:find(want, 1, true) ~= nil, err or ('got ' .. vim.inspect(text)))
  end

  -- Definition.
  if env.WEFT_DEFINITION_POS and env.WEFT_DEFINITION_POS ~= '' then
    set_cursor(env.WEFT_DEFINITION_POS)
    local result, err = request('textDocument/definition', vim.lsp.util.make_position_params(0, client.offset_encoding))
    if result and result.uri then
      result = { result }
    end
    local first = result and result[1]
    local want = env.WEFT_EXPECT_DEFINITION or ''
    local want_file, wl, wc = want:match('^(.-):?(%d+):(%d+)$')
    local ok, detail = false, err or 'no location'
    if first then
      local uri = first.targetUri or first.uri
      local range = first.targetSelectionRange or first.range
      local line = range.start.line + 1
      local target_buf = vim.uri_to_bufnr(uri)
      vim.fn.bufload(target_buf)
      local text = vim.api.nvim_buf_get_lines(target_buf, range.start.line, range.start.line + 1, false)[1] or ''
      -- LSP columns are UTF-16 (or the negotiated encoding); the ruler counts bytes.
      local col
      if vim.fn.has('nvim-0.11') == 1 then
        col = vim.str_byteindex(text, client.offset_encoding, range.start.character, false) + 1
      else
        col = vim.str_byteindex(text, range.start.character, client.offset_encoding == 'utf-16') + 1
      end
      local target = vim.uri_to_fname(uri)
      ok = line == tonumber(wl) and col == tonumber(wc)
        and (want_file == '' or target:sub(-#want_file) == want_file)
      detail = string.format('got %s:%d:%d', target, line, col)
    end
    check('definition at ' .. env.WEFT_DEFINITION_POS .. ' is ' .. want, ok, detail)
  end

  -- :WeftRun and :WeftRunGpu
  local function check_run(command, spec, want)
    set_cursor(spec)
    local win = vim.api.nvim_get_current_win()
    local b = vim.fn.bufnr('weft://run')
    if b ~= -1 then
      vim.api.nvim_buf_delete(b, { force = true })
    end
    vim.cmd(command)
    local shown = vim.wait(timeout, function()
      local b = vim.fn.bufnr('weft://run')
      return b ~= -1 and table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n'):find(want, 1, true) ~= nil
    end, 20)
    b = vim.fn.bufnr('weft://run')
    local text = b ~= -1 and table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n') or '(no buffer)'
    check(':' .. command .. ' shows ' .. vim.inspect(want), shown, 'got ' .. vim.inspect(text))
    check(':' .. command .. ' buffer is read-only', b ~= -1 and not vim.api.nvim_buf_get_option(b, 'modifiable'))
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_buf(win, bufnr)
  end
  if env.WEFT_RUN_POS and env.WEFT_RUN_POS ~= '' then
    check_run('WeftRun', env.WEFT_RUN_POS, env.WEFT_EXPECT_RUN or '')
  end
  if env.WEFT_GPU_RUN_POS and env.WEFT_GPU_RUN_POS ~= '' then
    check_run('WeftRunGpu', env.WEFT_GPU_RUN_POS, env.WEFT_EXPECT_GPU_RUN or '')
  end

  -- :WeftProfile: the report in weft://run, the SVG handed to open_file.
  if env.WEFT_PROFILE_POS and env.WEFT_PROFILE_POS ~= '' then
    local opened = {}
    local open_file = weft.open_file
    weft.open_file = function(path)
      opened[#opened + 1] = path
    end
    check_run('WeftProfile', env.WEFT_PROFILE_POS, env.WEFT_EXPECT_PROFILE or '')
    local got = vim.wait(timeout, function()
      return #opened > 0
    end, 20)
    local svg = opened[1] or ''
    check(':WeftProfile opens the summary cost graph', got and svg:sub(-#'summary.svg') == 'summary.svg', vim.inspect(opened))
    if env.WEFT_PROFILE_SVG_EXISTS == '1' then
      check(':WeftProfile wrote the SVG', vim.fn.filereadable(svg) == 1, svg)
    end
    weft.open_file = open_file
  end

  -- :WeftShowKernel
  if env.WEFT_KERNEL_POS and env.WEFT_KERNEL_POS ~= '' then
    set_cursor(env.WEFT_KERNEL_POS)
    local win = vim.api.nvim_get_current_win()
    local before = vim.api.nvim_get_current_buf()
    vim.cmd('WeftShowKernel')
    local want = env.WEFT_EXPECT_KERNEL or ''
    local shown = vim.wait(timeout, function()
      return vim.api.nvim_get_current_buf() ~= before
    end, 20)
    local kb = vim.api.nvim_get_current_buf()
    local text = table.concat(vim.api.nvim_buf_get_lines(kb, 0, -1, false), '\n')
    check(':WeftShowKernel opens the kernel', shown and text:find(want, 1, true) ~= nil, 'got ' .. vim.inspect(text))
    local ft = vim.bo[kb].filetype
    check('kernel buffer has filetype opencl or c', ft == 'opencl' or ft == 'c', ft)
    check('kernel buffer is read-only', not vim.bo[kb].modifiable and vim.bo[kb].buftype == 'nofile')
    if env.WEFT_EXPECT_KERNEL_LINKS == '1' then
      check_kernel_links(weft, kb, bufnr)
    end
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_buf(win, bufnr)
  end

  -- A second file under the same root shares the client.
  if env.WEFT_TEST_FILE2 and env.WEFT_TEST_FILE2 ~= '' then
    vim.cmd('edit ' .. vim.fn.fnameescape(env.WEFT_TEST_FILE2))
    local b2 = vim.api.nvim_get_current_buf()
    local shared = vim.wait(timeout, function()
      return weft_client(b2) ~= nil
    end, 20)
    check('second file attaches', shared)
    check('second file reuses the client', shared and weft_client(b2).id == client.id,
      shared and ('client ' .. weft_client(b2).id .. ' vs ' .. client.id) or nil)
    vim.cmd('buffer ' .. bufnr)
  end

  -- :WeftRestart
  if env.WEFT_TEST_RESTART == '1' then
    local old = client.id
    vim.cmd('WeftRestart')
    local restarted = vim.wait(timeout, function()
      local c = weft_client(bufnr)
      return c ~= nil and c.id ~= old and c.initialized == true
    end, 20)
    check(':WeftRestart starts a new client', restarted)
    local old_client = vim.lsp.get_client_by_id(old)
    local stopped = old_client == nil
      or (vim.fn.has('nvim-0.11') == 1 and old_client:is_stopped() or old_client.is_stopped())
    check('the old client is stopped', stopped)
  end

  finish()
end

local ok, err = pcall(main)
if not ok then
  check('test script runs without error', false, tostring(err))
  finish()
end
