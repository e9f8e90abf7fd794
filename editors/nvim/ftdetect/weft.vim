" Weft source files.
autocmd BufRead,BufNewFile *.weft setfiletype weft
