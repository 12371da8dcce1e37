-- A Neovim (0.7.2) LSP client driven by a small step language, for tests/lsp_face.rs.
--
-- Run: nvim --headless --clean -u NONE -i NONE -n -c "luafile tests/lsp_face/nvim_client.lua"
-- Environment:
--   LSPF_CMD      the server command, a JSON list (e.g. ["lspgate","lsp"])
--   LSPF_ROOT     the workspace root (root_dir; files are named relative to it)
--   LSPF_OUT      a file this script appends its observations to, one JSON object a line
--   LSPF_SIGNALS  a folder the test creates files in; `wait_go` waits for one
--   LSPF_STEPS    a JSON list of steps, each {"do": NAME, ...}:
--     open {file}                         :edit the file, attach the client (didOpen)
--     edit {file, text}                   replace the buffer's lines, unsaved (didChange)
--     mark {file}                         from now on only newer diagnostics count as fresh
--     wait_diagnostics {file, match?, empty?, fresh?=true, timeout_ms?}
--                                         wait for a publishDiagnostics of the file (after its
--                                         last open/edit/mark unless fresh=false) with a
--                                         message containing `match`, or with none if `empty`
--     hover | definition | references {file, line (1-based), symbol, occurrence?=1}
--                                         the request at `symbol` on `line`, in the buffer
--     close {file}                        :bwipeout! (didClose)
--     sleep {ms}
--     wait_go {name, timeout_ms?}         wait until $LSPF_SIGNALS/NAME exists
--     stop {timeout_ms?}                  shutdown/exit, wait for the server's exit
--   Any step may carry a `label`, copied into its `step` line.
-- Output lines: {"event":"initialized"|"diagnostics"|"step"|"exit"|"error"|"done", ...}; a
-- `step` line holds the step's result (`result`, `err`) once it has finished.

local json = vim.json
local out = assert(io.open(os.getenv('LSPF_OUT'), 'a'))
local root = os.getenv('LSPF_ROOT')
local signals = os.getenv('LSPF_SIGNALS') or root
if os.getenv('LSPF_DEBUG') then vim.lsp.set_log_level('debug') end
local uv = vim.loop

local function emit(obj)
  obj.t = uv.now()
  out:write(json.encode(obj), '\n')
  out:flush()
end

local function path_of(file) return root .. '/' .. file end
local function uri_of(file) return vim.uri_from_fname(path_of(file)) end

-- Every publishDiagnostics received, by uri, in order, each with a sequence number.
local seq = 0
local published = {}
local marks = {}
local exited = nil

local function on_diagnostics(err, result, ctx, config)
  seq = seq + 1
  local list = published[result.uri] or {}
  table.insert(list, { seq = seq, diagnostics = result.diagnostics, version = result.version })
  published[result.uri] = list
  emit({ event = 'diagnostics', seq = seq, uri = result.uri, version = result.version,
         diagnostics = result.diagnostics })
  -- Neovim's own handling too, as an editor would (it must not fail on what arrives).
  local ok, why = pcall(vim.lsp.diagnostic.on_publish_diagnostics, err, result, ctx, config)
  if not ok then emit({ event = 'error', where = 'on_publish_diagnostics', message = tostring(why) }) end
end

local cmd = json.decode(os.getenv('LSPF_CMD'))
local client_id = vim.lsp.start_client({
  cmd = cmd,
  root_dir = root,
  name = 'lspf',
  get_language_id = function(_, filetype) return filetype end,
  handlers = { ['textDocument/publishDiagnostics'] = on_diagnostics },
  on_init = function(client, result)
    emit({ event = 'initialized', capabilities = result.capabilities,
           offset_encoding = client.offset_encoding, server_info = result.serverInfo })
  end,
  on_exit = function(code, signal, id)
    exited = { code = code, signal = signal }
    emit({ event = 'exit', code = code, signal = signal, client_id = id })
  end,
  on_error = function(code, ...)
    emit({ event = 'error', where = 'rpc', code = vim.lsp.rpc.client_errors[code] or code,
           detail = vim.inspect({ ... }) })
  end,
})
if not client_id then
  emit({ event = 'error', where = 'start_client', message = 'no client' })
end

local filetypes = { py = 'python', pyi = 'python', ts = 'typescript', js = 'javascript',
                    c = 'c', h = 'c', cpp = 'cpp', sh = 'sh', go = 'go' }

local function client() return vim.lsp.get_client_by_id(client_id) end

local function buffer_of(file)
  local nr = vim.fn.bufnr(path_of(file))
  assert(nr ~= -1, 'not open: ' .. file)
  return nr
end

local function position(step)
  local buf = buffer_of(step.file)
  vim.api.nvim_set_current_buf(buf)
  local line = vim.api.nvim_buf_get_lines(buf, step.line - 1, step.line, true)[1]
  local at = 0
  for _ = 1, step.occurrence or 1 do
    at = assert(line:find(step.symbol, at + 1, true), 'no ' .. step.symbol .. ' on line ' .. step.line)
  end
  vim.api.nvim_win_set_cursor(0, { step.line, at - 1 })
  return buf, vim.lsp.util.make_position_params(0, client().offset_encoding)
end

local function request(method, step, extra)
  local buf, params = position(step)
  for k, v in pairs(extra or {}) do params[k] = v end
  local answer, why = client().request_sync(method, params, step.timeout_ms or 30000, buf)
  if not answer then return nil, why or 'request failed' end
  return answer.result, answer.err
end

local function fresh_match(step)
  local since = (step.fresh == false) and 0 or (marks[uri_of(step.file)] or 0)
  for _, p in ipairs(published[uri_of(step.file)] or {}) do
    if p.seq > since then
      if step.empty then
        if #p.diagnostics == 0 then return p end
      elseif step.match then
        for _, d in ipairs(p.diagnostics) do
          if d.message:find(step.match, 1, true) then return p end
        end
      else
        return p
      end
    end
  end
  return nil
end

local steps = {
  open = function(step)
    local ok = vim.wait(30000, function() local c = client(); return c and c.initialized end, 10)
    if not ok then return nil, 'client not initialized' end
    vim.cmd('edit ' .. vim.fn.fnameescape(path_of(step.file)))
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].filetype = step.filetype or filetypes[step.file:match('%.(%w+)$')] or ''
    marks[uri_of(step.file)] = seq
    return vim.lsp.buf_attach_client(buf, client_id)
  end,
  edit = function(step)
    local buf = buffer_of(step.file)
    marks[uri_of(step.file)] = seq
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split((step.text:gsub('\n$', '')), '\n', true))
    return vim.lsp.util.buf_versions[buf]
  end,
  mark = function(step)
    marks[uri_of(step.file)] = seq
    return seq
  end,
  wait_diagnostics = function(step)
    local found = nil
    vim.wait(step.timeout_ms or 60000, function() found = fresh_match(step); return found ~= nil end, 20)
    if not found then return nil, 'no matching publishDiagnostics for ' .. step.file end
    return found
  end,
  hover = function(step) return request('textDocument/hover', step) end,
  definition = function(step) return request('textDocument/definition', step) end,
  references = function(step)
    return request('textDocument/references', step, { context = { includeDeclaration = true } })
  end,
  -- The whole document formatted (the answer, or the server's error as `err`).
  format = function(step)
    local buf = buffer_of(step.file)
    local params = { textDocument = { uri = uri_of(step.file) },
                     options = { tabSize = 4, insertSpaces = true } }
    local answer, why = client().request_sync('textDocument/formatting', params, step.timeout_ms or 30000, buf)
    if not answer then return nil, why or 'request failed' end
    return answer.result, answer.err
  end,
  -- `:edit!`: the buffer read again from disk. Neovim sends didClose; the client attaches
  -- again as lspconfig's FileType autocommand does, and so sends didOpen with the disk's text.
  reload = function(step)
    local buf = buffer_of(step.file)
    vim.api.nvim_set_current_buf(buf)
    marks[uri_of(step.file)] = seq
    vim.cmd('edit!')
    vim.bo[buf].filetype = step.filetype or filetypes[step.file:match('%.(%w+)$')] or ''
    return vim.lsp.buf_attach_client(buf, client_id)
  end,
  close = function(step)
    vim.cmd('bwipeout! ' .. buffer_of(step.file))
    return true
  end,
  sleep = function(step)
    vim.wait(step.ms, function() return false end, 10)
    return true
  end,
  wait_go = function(step)
    local path = signals .. '/' .. step.name
    local ok = vim.wait(step.timeout_ms or 120000, function() return uv.fs_stat(path) ~= nil end, 20)
    if not ok then return nil, 'no signal ' .. step.name end
    return true
  end,
  stop = function(step)
    vim.lsp.stop_client(client_id)
    local ok = vim.wait(step.timeout_ms or 10000, function() return exited ~= nil end, 10)
    if not ok then return nil, 'server did not exit' end
    return exited
  end,
}

local function run()
  for i, step in ipairs(json.decode(os.getenv('LSPF_STEPS'))) do
    local fn = steps[step['do']]
    local ok, result, err = pcall(function()
      assert(fn, 'unknown step ' .. tostring(step['do']))
      return fn(step)
    end)
    if not ok then result, err = nil, tostring(result) end
    emit({ event = 'step', i = i, ['do'] = step['do'], label = step.label, file = step.file,
           result = result, err = err })
  end
end

local ok, why = pcall(run)
if not ok then emit({ event = 'error', where = 'run', message = tostring(why) }) end
emit({ event = 'done' })
out:close()
vim.cmd('qa!')
