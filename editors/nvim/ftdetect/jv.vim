" .jv files are idf-verify programs.
autocmd BufRead,BufNewFile *.jv setfiletype jv
