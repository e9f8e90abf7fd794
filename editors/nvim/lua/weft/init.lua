-- Weft for Neovim: starts `weft lsp` with the built-in LSP client and adds the
-- commands :WeftRun, :WeftRunGpu, :WeftProfile, :WeftShowKernel, :WeftRestart (and
-- :WeftFormat).
--
-- Works on Neovim 0.7 (vim.lsp.start_client, the API Debian ships) and later. Anything
-- newer than 0.7 is guarded with vim.fn.has('nvim-0.x').
--
--   require('weft').setup {
--     cmd = { 'weft', 'lsp' },
--     root_markers = { '.git' },
--     on_attach = function(client, bufnr) ... end,
--   }

local M = {}

local uv = vim.uv or vim.loop

local RUN_ENTRY = 'weft.server.runEntry'
local RUN_ON_GPU = 'weft.server.runOnGpu'
local PROFILE = 'weft.server.profile'
local SHOW_KERNEL = 'weft/showKernel'
local HOVER_DETAILS = 'weft.server.hoverDetails'

local defaults = {
  -- The server command: the executable and its arguments.
  cmd = { 'weft', 'lsp' },
  -- Extra environment for the server, e.g. { WEFT_DEVICE = 'cpu' }.
  cmd_env = nil,
  -- Files or folders that mark a workspace root; the nearest enclosing one wins. Without
  -- any, the file's own folder is the root. One server runs per root.
  root_markers = { '.git' },
  filetypes = { 'weft', 'apl' },
  -- function(client, bufnr), called when a buffer attaches.
  on_attach = nil,
  -- LSP client capabilities; nil means vim.lsp.protocol.make_client_capabilities().
  capabilities = nil,
  -- Sent as initializationOptions and answered to workspace/configuration.
  settings = {},
  -- Refresh code lenses (Run on GPU, Show kernel, ...) on BufEnter/InsertLeave/save when
  -- the server offers them. Run the one on the cursor's line with :WeftLens.
  codelens = true,
  -- Inlay hints (inferred types, implicit sizes) where the running Neovim has them
  -- (0.10+). Semantic tokens need no option: Neovim 0.9+ starts them itself.
  inlay_hints = true,
  -- Attach automatically to buffers of the filetypes above.
  autostart = true,
}

M.config = vim.deepcopy(defaults)

-- root directory -> client id
local clients_by_root = {}

-- ---------------------------------------------------------------------------- compat

local function has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

-- Client methods are closures on 0.7-0.10 and methods (client:request) from 0.11.
local function client_call(client, name, ...)
  if has('0.11') then
    return client[name](client, ...)
  end
  return client[name](...)
end

local function get_client(id)
  return vim.lsp.get_client_by_id(id)
end

local function buf_clients(bufnr)
  if has('0.10') then
    return vim.lsp.get_clients({ bufnr = bufnr, name = 'weft' })
  end
  local out = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if c.name == 'weft' then
      table.insert(out, c)
    end
  end
  return out
end

local function is_stopped(client)
  return client == nil or client_call(client, 'is_stopped')
end

local function notify(msg, level)
  vim.notify('weft: ' .. msg, level or vim.log.levels.INFO)
end

-- ---------------------------------------------------------------------------- roots

local function dirname(path)
  return vim.fn.fnamemodify(path, ':h')
end

--- The root for a file: the nearest ancestor folder with one of the markers, else the
--- file's own folder.
function M.root_dir(path, markers)
  markers = markers or M.config.root_markers
  local start = dirname(vim.fn.fnamemodify(path, ':p'))
  local dir = start
  while true do
    for _, marker in ipairs(markers) do
      if uv.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = dirname(dir)
    if parent == dir then
      break
    end
    dir = parent
  end
  return start
end

-- ---------------------------------------------------------------------------- scratch

local function find_window(bufnr)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      return win
    end
  end
end

--- Replaces the text of the read-only scratch buffer `bufnr`.
local function set_scratch_lines(bufnr, lines)
  vim.api.nvim_buf_set_option(bufnr, 'modifiable', true)
  vim.api.nvim_buf_set_option(bufnr, 'readonly', false)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(bufnr, 'modifiable', false)
  vim.api.nvim_buf_set_option(bufnr, 'readonly', true)
  vim.api.nvim_buf_set_option(bufnr, 'modified', false)
end

--- Shows `lines` in a read-only scratch buffer called `name` (reused if it exists).
function M.scratch(name, lines, filetype)
  local bufnr = vim.fn.bufnr('^' .. vim.fn.escape(name, '\\/.*$^~[]') .. '$')
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
  end
  vim.api.nvim_buf_set_option(bufnr, 'buftype', 'nofile')
  vim.api.nvim_buf_set_option(bufnr, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(bufnr, 'swapfile', false)
  set_scratch_lines(bufnr, lines)
  if filetype and vim.api.nvim_buf_get_option(bufnr, 'filetype') ~= filetype then
    vim.api.nvim_buf_set_option(bufnr, 'filetype', filetype)
  end
  local win = find_window(bufnr)
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  return bufnr
end

local function split_lines(text)
  local lines = {}
  for line in (text .. '\n'):gmatch('(.-)\r?\n') do
    table.insert(lines, line)
  end
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

-- ---------------------------------------------------------------------------- results

--- Lines for what `weft.server.runEntry` returned: a string, or
--- { ok, entry, values = {..}, stdout, stderr, message, timeMs, expected, matched }.
--- The values are printed once (stdout only when there are none), then whether they
--- match the test block's expected output.
function M.format_run_result(entry, result)
  local lines = { '▶ ' .. entry }
  if result == nil or result == vim.NIL then
    table.insert(lines, '(no result)')
    return lines
  end
  if type(result) == 'string' then
    vim.list_extend(lines, split_lines(result))
    return lines
  end
  if type(result) ~= 'table' then
    table.insert(lines, tostring(result))
    return lines
  end
  local known = false
  for _, k in ipairs({ 'values', 'stdout', 'stderr', 'message', 'timeMs', 'ok' }) do
    if result[k] ~= nil then
      known = true
    end
  end
  if not known then
    vim.list_extend(lines, split_lines(vim.inspect(result)))
    return lines
  end
  local values = type(result.values) == 'table' and result.values or {}
  for _, v in ipairs(values) do
    vim.list_extend(lines, split_lines(tostring(v)))
  end
  for _, k in ipairs({ 'stdout', 'stderr', 'message' }) do
    local shown = k ~= 'stdout' or #values == 0
    if shown and type(result[k]) == 'string' and result[k] ~= '' then
      vim.list_extend(lines, split_lines(result[k]))
    end
  end
  if result.matched == false and type(result.expected) == 'string' then
    table.insert(lines, 'expected: ' .. result.expected)
  end
  local status = result.ok == false and 'failed' or 'done'
  if result.matched == true then
    status = 'matched the expected output, ' .. status
  elseif result.matched == false then
    status = 'DIFFERS from the expected output, ' .. status
  end
  if type(result.timeMs) == 'number' then
    status = string.format('%s in %s ms', status, result.timeMs)
  end
  table.insert(lines, status)
  return lines
end

-- ---------------------------------------------------------------------------- kernel views

-- Compiler Explorer's colour linking: every source line that generated code computes
-- gets a colour (six in turn, by first appearance in the view), and so do the view's
-- lines computing it; the cursor on a line of either side marks the lines linked to it
-- on the other (WeftLinkFocus). A view is asked for again when its source is edited.
M.link_groups = { 'WeftLink1', 'WeftLink2', 'WeftLink3', 'WeftLink4', 'WeftLink5', 'WeftLink6' }
local link_ns = vim.api.nvim_create_namespace('weft_kernel_links')
local focus_ns = vim.api.nvim_create_namespace('weft_kernel_focus')
M.link_namespace, M.focus_namespace = link_ns, focus_ns
-- How long a source must stay unedited before its kernel views are asked for again.
M.refresh_delay_ms = 500

--- Defines the highlight groups (`default`: a colour scheme or :highlight wins).
function M.define_highlights()
  local dark = { '#4d3a0a', '#0a3a55', '#1e4a1e', '#4a1e4a', '#551e1e', '#0f4a4a' }
  local light = { '#ffe9bf', '#cfeaff', '#d9f5d9', '#f5d9f5', '#ffd9d9', '#ccf5f5' }
  local cterm = { 94, 24, 22, 53, 52, 23 }
  local colours = vim.o.background == 'light' and light or dark
  for i, group in ipairs(M.link_groups) do
    vim.api.nvim_set_hl(0, group, { bg = colours[i], ctermbg = cterm[i], default = true })
  end
  vim.api.nvim_set_hl(0, 'WeftLinkFocus', { bg = vim.o.background == 'light' and '#ffd54f' or '#806600',
    ctermbg = 136, bold = true, default = true })
end

-- kernel view buffer -> { lines = { {line, source = {uri, range}} }, source_buf, again }
local views = {}
M.views = views

local function loaded_buf(uri)
  local b = vim.uri_to_bufnr(uri)
  if vim.api.nvim_buf_is_loaded(b) then
    return b
  end
end

-- The colour (1..6) of each linked source line (`uri#line`) of a view, by first appearance.
local function source_colours(view)
  local colours, n = {}, 0
  for _, link in ipairs(view.lines) do
    local key = link.source.uri .. '#' .. link.source.range.start.line
    if not colours[key] then
      colours[key] = (n % #M.link_groups) + 1
      n = n + 1
    end
  end
  return colours
end

--- Colours every kernel view and the loaded sources of one.
function M.paint_links()
  local sources = {}
  for kbuf, view in pairs(views) do
    if vim.api.nvim_buf_is_valid(kbuf) then
      vim.api.nvim_buf_clear_namespace(kbuf, link_ns, 0, -1)
      for _, link in ipairs(view.lines) do
        local b = loaded_buf(link.source.uri)
        if b and not sources[b] then
          sources[b] = true
          vim.api.nvim_buf_clear_namespace(b, link_ns, 0, -1)
        end
      end
    else
      views[kbuf] = nil
    end
  end
  for kbuf, view in pairs(views) do
    local colours = source_colours(view)
    local line_count = vim.api.nvim_buf_line_count(kbuf)
    for _, link in ipairs(view.lines) do
      local key = link.source.uri .. '#' .. link.source.range.start.line
      local group = M.link_groups[colours[key]]
      if link.line < line_count then
        vim.api.nvim_buf_add_highlight(kbuf, link_ns, group, link.line, 0, -1)
      end
      local b = loaded_buf(link.source.uri)
      if b and link.source.range.start.line < vim.api.nvim_buf_line_count(b) then
        vim.api.nvim_buf_add_highlight(b, link_ns, group, link.source.range.start.line, 0, -1)
      end
    end
  end
end

-- A byte column of `text` from an LSP (UTF-16) column.
local function byte_col(text, col)
  local ok, b
  if has('0.11') then
    ok, b = pcall(vim.str_byteindex, text, 'utf-16', col, false)
  else
    ok, b = pcall(vim.str_byteindex, text, col, true)
  end
  return ok and b or #text
end

-- Scrolls the window showing `bufnr` (if any) so that 0-based `line` is in view.
local function reveal(bufnr, line)
  local win = find_window(bufnr)
  if not win or win == vim.api.nvim_get_current_win() then
    return
  end
  vim.api.nvim_win_call(win, function()
    local top, bottom = vim.fn.line('w0'), vim.fn.line('w$')
    if line + 1 < top or line + 1 > bottom then
      local height = vim.api.nvim_win_get_height(0)
      vim.fn.winrestview({ topline = math.max(1, line + 1 - math.floor(height / 2)) })
    end
  end)
end

local function clear_focus()
  for kbuf, view in pairs(views) do
    if vim.api.nvim_buf_is_valid(kbuf) then
      vim.api.nvim_buf_clear_namespace(kbuf, focus_ns, 0, -1)
    end
    if view.source_buf and vim.api.nvim_buf_is_valid(view.source_buf) then
      vim.api.nvim_buf_clear_namespace(view.source_buf, focus_ns, 0, -1)
    end
  end
end

--- The cursor is on 0-based `line` of `bufnr`: in a kernel view, marks the source
--- expression that line computes and the view's lines computing the same source line;
--- in a source, marks the lines of its kernel views computing the cursor's line.
function M.follow(bufnr, line)
  clear_focus()
  local view = views[bufnr]
  if view then
    for _, link in ipairs(view.lines) do
      if link.line == line then
        local start, finish = link.source.range.start, link.source.range['end']
        local b = loaded_buf(link.source.uri)
        if b then
          for l = start.line, finish.line do
            local text = vim.api.nvim_buf_get_lines(b, l, l + 1, false)[1] or ''
            local from = l == start.line and byte_col(text, start.character) or 0
            local to = l == finish.line and byte_col(text, finish.character) or -1
            vim.api.nvim_buf_add_highlight(b, focus_ns, 'WeftLinkFocus', l, from, to)
          end
          reveal(b, start.line)
        end
        for _, other in ipairs(view.lines) do
          if other.source.uri == link.source.uri and other.source.range.start.line == start.line then
            vim.api.nvim_buf_add_highlight(bufnr, focus_ns, 'WeftLinkFocus', other.line, 0, -1)
          end
        end
        return
      end
    end
    return
  end
  local marked = false
  for kbuf, v in pairs(views) do
    local first
    for _, link in ipairs(v.lines) do
      if vim.uri_to_bufnr(link.source.uri) == bufnr and link.source.range.start.line == line
          and vim.api.nvim_buf_is_valid(kbuf) then
        vim.api.nvim_buf_add_highlight(kbuf, focus_ns, 'WeftLinkFocus', link.line, 0, -1)
        first = first or link.line
      end
    end
    if first then
      marked = true
      reveal(kbuf, first)
    end
  end
  if marked then
    vim.api.nvim_buf_add_highlight(bufnr, focus_ns, 'WeftLinkFocus', line, 0, -1)
  end
end

local function kernel_filetype()
  if #vim.api.nvim_get_runtime_file('syntax/opencl.vim', false) > 0 then
    return 'opencl'
  end
  return 'c'
end

local function cursor_line()
  return vim.api.nvim_win_get_cursor(0)[1] - 1
end

-- Follows the cursor in a view and its source, and asks for the view again (`again`)
-- once edits of the source pause.
local function watch(kbuf, view)
  local group = vim.api.nvim_create_augroup('weft_kernel_view_' .. kbuf, { clear = true })
  vim.api.nvim_create_autocmd('CursorMoved', { group = group, buffer = kbuf, callback = function()
    M.follow(kbuf, cursor_line())
  end })
  vim.api.nvim_create_autocmd({ 'BufWipeout', 'BufDelete' }, { group = group, buffer = kbuf, callback = function()
    views[kbuf] = nil
    pcall(vim.api.nvim_del_augroup_by_id, group)
  end })
  local source = view.source_buf
  if not source or not vim.api.nvim_buf_is_valid(source) then
    return
  end
  vim.api.nvim_create_autocmd('CursorMoved', { group = group, buffer = source, callback = function()
    M.follow(source, cursor_line())
  end })
  local pending = 0
  vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, { group = group, buffer = source, callback = function()
    pending = pending + 1
    local mine = pending
    vim.defer_fn(function()
      local current = views[kbuf]
      if mine ~= pending or not current or not current.again then
        return
      end
      current.again(function(result)
        if type(result) == 'table' and type(result.text) == 'string' and vim.api.nvim_buf_is_valid(kbuf) then
          set_scratch_lines(kbuf, split_lines(result.text))
          current.lines = type(result.lines) == 'table' and result.lines or {}
          M.paint_links()
        end
      end)
    end, M.refresh_delay_ms)
  end })
end

--- Shows a kernel view (`weft/showKernel`'s answer) with its lines linked to the source;
--- `again(callback)` asks for it again, `source_buf` is the buffer it was asked from.
local function show_kernel_result(result, source_buf, again)
  if type(result) ~= 'table' or type(result.text) ~= 'string' then
    notify('no kernel is generated for the code under the cursor')
    return
  end
  local name = type(result.uri) == 'string' and result.uri or 'weft-kernel://kernel.cl'
  local kbuf = M.scratch(name, split_lines(result.text), kernel_filetype())
  local view = {
    lines = type(result.lines) == 'table' and result.lines or {},
    source_buf = source_buf,
    again = again,
  }
  views[kbuf] = view
  M.define_highlights()
  M.paint_links()
  watch(kbuf, view)
  return kbuf
end

-- The label of a run in the weft://run buffer.
local function run_label(command, entry)
  if command == RUN_ON_GPU then
    return entry .. ' on GPU'
  end
  return entry
end

local function show_run_result(entry, result)
  return M.scratch('weft://run', M.format_run_result(entry, result), 'weftrun')
end

--- Opens a file the server wrote (the cost graph's SVG of "Profile"): vim.ui.open
--- (Neovim 0.10) when there is one, else a message with the path. Replaceable.
function M.open_file(path)
  if vim.ui and vim.ui.open then
    vim.ui.open(path)
  else
    notify('cost graph: ' .. path)
  end
end

--- Lines for what `weft.server.profile` returned: { ok, entry, svg, dot, dir, report,
--- stderr, message, timeMs }.
function M.format_profile_result(entry, result)
  local lines = { '▶ profile ' .. entry }
  if type(result) ~= 'table' then
    vim.list_extend(lines, split_lines(vim.inspect(result)))
    return lines
  end
  for _, k in ipairs({ 'report', 'stderr', 'message' }) do
    if type(result[k]) == 'string' and result[k] ~= '' and (k ~= 'stderr' or not result.ok) then
      vim.list_extend(lines, split_lines(result[k]))
    end
  end
  if type(result.svg) == 'string' then
    table.insert(lines, 'cost graph: ' .. result.svg)
  end
  return lines
end

local function show_profile_result(entry, result)
  M.scratch('weft://run', M.format_profile_result(entry, result), 'weftrun')
  if type(result) == 'table' and result.ok and type(result.svg) == 'string' then
    M.open_file(result.svg)
  end
end

--- Shows what a run or profile command returned.
local function show_result(command, entry, result)
  if command == PROFILE then
    show_profile_result(entry, result)
  else
    show_run_result(run_label(command, entry), result)
  end
end

-- ---------------------------------------------------------------------------- commands

local function current_client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  for _, c in ipairs(buf_clients(bufnr)) do
    if not is_stopped(c) then
      return c
    end
  end
  notify('no Weft language server is attached to this buffer', vim.log.levels.WARN)
end

local function entries_of(lines)
  local out = {}
  for i, line in ipairs(lines) do
    local name = line:match("^entry%s+([%a_][%w_']*)")
    if name then
      table.insert(out, { name = name, line = i })
    end
  end
  return out
end

--- The entry under the cursor: the entry named by the word under the cursor, else the
--- top-level declaration enclosing the cursor if it is an entry.
function M.entry_at_cursor(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local word = vim.fn.expand('<cword>')
  for _, e in ipairs(entries_of(lines)) do
    if e.name == word then
      return word
    end
  end
  local row = vim.api.nvim_win_get_cursor(0)[1]
  for i = math.min(row, #lines), 1, -1 do
    local l = lines[i]
    if l:match('^entry[%s]') or l:match('^def[%s]') or l:match('^type[%s]') or l:match('^import[%s"]') then
      return l:match("^entry%s+([%a_][%w_']*)")
    end
  end
end

--- Sends workspace/executeCommand and calls on_result(result) (errors are notified).
function M.execute_command(client, command, arguments, bufnr, on_result)
  local params = { command = command, arguments = arguments }
  client_call(client, 'request', 'workspace/executeCommand', params, function(err, result)
    if err then
      notify(string.format('%s failed: %s', command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result)
    end
  end, bufnr)
end

--- :WeftRun [entry] (the interpreter) and :WeftRunGpu [entry] (weft-runner on an
--- OpenCL device, `command` = 'weft.server.runOnGpu').
function M.run_entry(entry, command)
  command = command or RUN_ENTRY
  local bufnr = vim.api.nvim_get_current_buf()
  local client = current_client(bufnr)
  if not client then
    return
  end
  if entry == nil or entry == '' then
    entry = M.entry_at_cursor(bufnr)
  end
  if not entry then
    local entries = entries_of(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false))
    if #entries == 1 then
      entry = entries[1].name
    else
      notify('put the cursor in an entry, or give its name: :WeftRun NAME', vim.log.levels.WARN)
      return
    end
  end
  local args = { { uri = vim.uri_from_bufnr(bufnr), entry = entry } }
  M.execute_command(client, command, args, bufnr, function(result)
    show_result(command, entry, result)
  end)
end

--- :WeftShowKernel
function M.show_kernel()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = current_client(bufnr)
  if not client then
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local function ask(on_result)
    client_call(client, 'request', SHOW_KERNEL, params, function(err, result)
      if err then
        notify('weft/showKernel failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        return
      end
      on_result(result)
    end, bufnr)
  end
  ask(function(result)
    show_kernel_result(result, bufnr, ask)
  end)
end

--- :WeftDetails: the hover at the cursor with its whole derivation (symbolic costs,
--- regions), in a read-only markdown scratch buffer.
function M.hover_details()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = current_client(bufnr)
  if not client then
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local request = { command = HOVER_DETAILS, arguments = { params } }
  client_call(client, 'request', 'workspace/executeCommand', request, function(err, result)
    if err then
      notify('hover details failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if type(result) ~= 'table' or type(result.text) ~= 'string' then
      notify('nothing to show under the cursor')
      return
    end
    M.scratch(result.uri, split_lines(result.text), 'markdown')
  end, bufnr)
end

--- :WeftRestart: stops every Weft server and attaches the open Weft buffers again.
function M.restart()
  local ids = {}
  for root, id in pairs(clients_by_root) do
    ids[#ids + 1] = id
    clients_by_root[root] = nil
  end
  for _, id in ipairs(ids) do
    local c = get_client(id)
    if c then
      client_call(c, 'stop')
    end
  end
  -- Give the old servers a moment to exit, then start new ones.
  vim.defer_fn(function()
    for _, id in ipairs(ids) do
      local c = get_client(id)
      if c and not is_stopped(c) then
        client_call(c, 'stop', true)
      end
    end
    M.attach_all()
  end, 200)
end

--- :WeftFormat: formatting through the server.
function M.format()
  if has('0.8') then
    vim.lsp.buf.format({ name = 'weft' })
  else
    vim.lsp.buf.formatting_sync(nil, 2000)
  end
end

-- Client-side handlers for server commands: code lenses and code actions whose command
-- is one of these run here (Neovim checks client.commands before asking the server), so
-- their results are shown. Other `weft.server.*` commands go to the server as usual.
local function client_commands()
  local function run(command, ctx)
    local client = get_client(ctx.client_id)
    if not client then
      return
    end
    local args = command.arguments or {}
    local entry = type(args[1]) == 'table' and args[1].entry or '?'
    M.execute_command(client, command.command, args, ctx.bufnr, function(result)
      show_result(command.command, entry, result)
    end)
  end
  return {
    [RUN_ENTRY] = run,
    [RUN_ON_GPU] = run,
    [PROFILE] = run,
    ['weft.server.showKernel'] = function(command, ctx)
      local client = get_client(ctx.client_id)
      if client then
        local function ask(on_result)
          M.execute_command(client, command.command, command.arguments, ctx.bufnr, on_result)
        end
        ask(function(result)
          show_kernel_result(result, ctx.bufnr, ask)
        end)
      end
    end,
  }
end

-- ---------------------------------------------------------------------------- clients

local function on_attach(client, bufnr)
  local caps = client.server_capabilities or {}
  if M.config.codelens and caps.codeLensProvider then
    local group = vim.api.nvim_create_augroup('weft_codelens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        vim.lsp.codelens.refresh()
      end,
    })
    vim.lsp.codelens.refresh()
  end
  if M.config.inlay_hints and has('0.10') and caps.inlayHintProvider then
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end
  -- Completion with <C-x><C-o> (Neovim sets this itself only from 0.10 on).
  if caps.completionProvider then
    vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
  end
  if M.config.on_attach then
    M.config.on_attach(client, bufnr)
  end
end

local function client_config(root)
  local cfg = M.config
  return {
    name = 'weft',
    cmd = cfg.cmd,
    cmd_env = cfg.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    capabilities = cfg.capabilities or vim.lsp.protocol.make_client_capabilities(),
    init_options = cfg.settings,
    settings = cfg.settings,
    commands = client_commands(),
    on_attach = on_attach,
    on_exit = function(_, _, client_id)
      if clients_by_root[root] == client_id then
        clients_by_root[root] = nil
      end
    end,
  }
end

--- Attaches `bufnr` to the server of its root, starting that server if needed.
--- Returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == '' or path:match('^%a[%w+.-]*://') then
    return nil -- unnamed or virtual buffers (weft-kernel://) have no root
  end
  local root = M.root_dir(path)
  local id = clients_by_root[root]
  if id == nil or is_stopped(get_client(id)) then
    if vim.fn.executable(M.config.cmd[1]) ~= 1 then
      notify(string.format('cannot start the server: `%s` is not executable (see :h weft-setup)', M.config.cmd[1]),
        vim.log.levels.ERROR)
      return nil
    end
    local config = client_config(root)
    if has('0.8') then
      -- vim.lsp.start starts and attaches; start_client is deprecated from 0.11 on.
      id = vim.lsp.start(config, {
        bufnr = bufnr,
        reuse_client = function(client, conf)
          return client.name == conf.name and client.config.root_dir == conf.root_dir
        end,
      })
    else
      id = vim.lsp.start_client(config)
    end
    if not id then
      return nil
    end
    clients_by_root[root] = id
  end
  if not vim.lsp.buf_is_attached(bufnr, id) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- Attaches every loaded buffer of a Weft filetype.
function M.attach_all()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr)
        and vim.tbl_contains(M.config.filetypes, vim.api.nvim_buf_get_option(bufnr, 'filetype')) then
      M.attach(bufnr)
    end
  end
end

--- The running clients, by root folder.
function M.clients()
  local out = {}
  for root, id in pairs(clients_by_root) do
    out[root] = get_client(id)
  end
  return out
end

local function create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('WeftRun', function(o)
    M.run_entry(o.args)
  end, { nargs = '?', desc = 'Run the Weft entry under the cursor (or the one named)' })
  cmd('WeftRunGpu', function(o)
    M.run_entry(o.args, RUN_ON_GPU)
  end, { nargs = '?', desc = 'Run the Weft entry under the cursor (or the one named) on an OpenCL device' })
  cmd('WeftProfile', function(o)
    M.run_entry(o.args, PROFILE)
  end, { nargs = '?', desc = 'Profile the Weft entry under the cursor (or the one named) and open its cost graph' })
  cmd('WeftShowKernel', function()
    M.show_kernel()
  end, { desc = 'Show the OpenCL kernel generated for the code under the cursor' })
  cmd('WeftRestart', function()
    M.restart()
  end, { desc = 'Restart the Weft language server' })
  cmd('WeftFormat', function()
    M.format()
  end, { desc = 'Format the buffer with the Weft language server' })
  cmd('WeftDetails', function()
    M.hover_details()
  end, { desc = 'Show the hover at the cursor with its whole derivation (costs, regions)' })
  cmd('WeftLens', function()
    vim.lsp.codelens.run()
  end, { desc = 'Run the code lens of the current line (Run, Run on GPU, Show kernels, Profile)' })
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if opts and opts.cmd then
    M.config.cmd = opts.cmd -- lists are replaced, not merged
  end
  if opts and opts.root_markers then
    M.config.root_markers = opts.root_markers
  end
  create_commands()
  local group = vim.api.nvim_create_augroup('weft_lsp', { clear = true })
  if M.config.autostart then
    vim.api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = M.config.filetypes,
      callback = function(args)
        M.attach(args.buf)
      end,
    })
    M.attach_all()
  end
end

return M
