-- idf-verify's language server in Neovim (0.7 or later, no plugin needed).
-- Put this file in ~/.config/nvim/plugin/ (or `require` it from your init.lua);
-- `idf-verify` must be on your PATH (`cargo install --path .`).
--
-- What you get on a .jv file: diagnostics with their error ids (`:lua
-- vim.diagnostic.open_float()` shows the counterexample), per-member status as code
-- lenses (refreshed below), and on `K` (hover) over a line of a failing member the
-- symbolic state there.

vim.cmd([[autocmd BufRead,BufNewFile *.jv setfiletype jv]])

local group = vim.api.nvim_create_augroup("idf-verify", { clear = true })

vim.api.nvim_create_autocmd("FileType", {
  group = group,
  pattern = "jv",
  callback = function(args)
    local config = {
      name = "idf-verify",
      cmd = { "idf-verify", "lsp" },
      root_dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(args.buf), ":p:h"),
      -- timeout: seconds per member (null: none); jobs: members in parallel (0: all
      -- cores); debounceMs: pause after an edit before verifying; smoke: vacuity warnings.
      init_options = { timeout = 10, jobs = 0, debounceMs = 300, smoke = false },
      handlers = {
        -- The server logs the end of each run: show the lenses of its results.
        ["window/logMessage"] = function(err, result, ctx, cfg)
          pcall(vim.lsp.codelens.refresh)
          return vim.lsp.handlers["window/logMessage"](err, result, ctx, cfg)
        end,
      },
    }
    if vim.lsp.start then
      vim.lsp.start(config, { bufnr = args.buf }) -- Neovim 0.8 and later
    else
      local id = vim.lsp.start_client(config)
      if id then
        vim.lsp.buf_attach_client(args.buf, id)
      end
    end
    vim.keymap.set("n", "K", vim.lsp.buf.hover, { buffer = args.buf })
  end,
})
