" APL source files (Weft's APL front end, docs/apl.md).
autocmd BufRead,BufNewFile *.apl setfiletype apl
